"""`input_layer` and `linear_model`: feature columns into one dense tensor or into the
logits of a linear model, with TF's scopes and variable names
(`input_layer/<col>_embedding/embedding_weights`, `linear_model/<col>/weights`,
`linear_model/bias_weights`). Columns are taken in order of name, as TF takes them.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.feature_column.columns import (
    _add_to,
    _CategoricalColumn,
    _DenseColumn,
    _LazyBuilder,
)
from tensorweave.feature_column.sparse import combine
from tensorweave.ops.array_ops import reshape, shape
from tensorweave.ops.init_ops import zeros_initializer
from tensorweave.ops.joining_ops import concat, stack
from tensorweave.ops.math_matmul_ops import add_n, matmul
from tensorweave.ops.nn_ops import bias_add
from tensorweave.ops.variable_scope import get_variable, variable_scope


def _columns(feature_columns, allowed, message: str) -> list:
    cols = list(feature_columns) if isinstance(feature_columns, (list, tuple, set)) else [
        feature_columns]
    if not cols:
        raise ValueError("feature_columns must not be empty.")
    for c in cols:
        if not isinstance(c, allowed):
            raise ValueError(f"{message} Given: {c}")
    if len({c.name for c in cols}) != len(cols):
        raise ValueError(f"Duplicate feature column name found for columns: {cols}")
    return sorted(cols, key=lambda c: c.name)


def _flat(tensor, column):
    n = column._variable_shape.num_elements()
    return reshape(tensor, stack([shape(tensor)[0], n]))


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """One [batch, sum of column widths] float tensor from dense `feature_columns`.

    Raises:
      ValueError: a column is not dense (wrap categorical ones in `embedding_column` or
        `indicator_column`), or a feature is missing.
    """
    cols = _columns(feature_columns, _DenseColumn,
                    "Items of feature_columns must be a _DenseColumn. You can wrap a "
                    "categorical column with an embedding_column or indicator_column.")
    with variable_scope(None, default_name="input_layer", values=list(features.values())):
        builder = _LazyBuilder(features)
        outputs = []
        for col in cols:
            with variable_scope(None, default_name=col._var_scope_name):
                t = _flat(col._get_dense_tensor(builder, weight_collections, trainable), col)
                outputs.append(t)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[col] = t
        return concat(outputs, 1)


def _weighted_sum(col, builder, units, sparse_combiner, weight_collections, trainable):
    if isinstance(col, _CategoricalColumn):
        ids = col._get_sparse_tensors(builder, weight_collections, trainable)
        w = get_variable("weights", shape=[col._num_buckets, units], dtype=dtypes.float32,
                         initializer=zeros_initializer(), trainable=trainable)
        _add_to(w, weight_collections)
        return combine(w, ids.id_tensor, ids.weight_tensor, sparse_combiner), w
    t = _flat(col._get_dense_tensor(builder, weight_collections, trainable), col)
    w = get_variable("weights", shape=[col._variable_shape.num_elements(), units],
                     dtype=dtypes.float32, initializer=zeros_initializer(), trainable=trainable)
    _add_to(w, weight_collections)
    return matmul(t, w, name="weighted_sum"), w


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """Logits `sum_c x_c W_c + b` ([batch, units]); categorical columns look their weights up.

    `cols_to_vars`, when given, is filled with each column's weight variables (and 'bias').
    """
    cols = _columns(feature_columns, (_DenseColumn, _CategoricalColumn),
                    "Items of feature_columns must be either a _DenseColumn or "
                    "_CategoricalColumn.")
    with variable_scope(None, default_name="linear_model", values=list(features.values())):
        builder = _LazyBuilder(features)
        sums = []
        for col in cols:
            with variable_scope(None, default_name=col._var_scope_name):
                s, w = _weighted_sum(col, builder, units, sparse_combiner, weight_collections,
                                     trainable)
                sums.append(s)
                if cols_to_vars is not None:
                    cols_to_vars[col] = [w]
        no_bias = add_n(sums, name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units], dtype=dtypes.float32,
                            initializer=zeros_initializer(), trainable=trainable)
        _add_to(bias, weight_collections)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return bias_add(no_bias, bias, name="weighted_sum")
