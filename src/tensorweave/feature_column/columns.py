"""TF1's feature columns (`tf.feature_column`): what each column reads and how it becomes a
dense tensor or a SparseTensor of category ids.

A column's name is TF's (`age_bucketized`, `a_X_b`, `word_embedding` ...), and so are the
variables it creates (`embedding_weights`), the hash functions (Fingerprint64 for hash
buckets, FingerprintCat64 for crosses) and the lookup tables (`<key>_lookup`), so a model
built on columns checkpoints and scores as in TensorFlow. Dense columns give
`_get_dense_tensor`; categorical ones `_get_sparse_tensors` and `_num_buckets`.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from tensorweave import dtypes
from tensorweave.feature_column.sparse import combine, to_sparse
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import expand_dims, reshape, shape
from tensorweave.ops.creation_ops import range as _range
from tensorweave.ops.gather_ops import one_hot
from tensorweave.ops.init_ops import truncated_normal_initializer
from tensorweave.ops.joining_ops import stack, tile
from tensorweave.ops.lookup_tables import index_table_from_file, index_table_from_tensor
from tensorweave.ops.math_ops import add, cast, greater_equal, multiply
from tensorweave.ops.parsing_ops import sparse_tensor_to_dense
from tensorweave.ops.reduction_ops import reduce_sum
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.ops.string_hash_ops import sparse_cross_hashed, string_to_hash_bucket_fast
from tensorweave.ops.string_ops import as_string
from tensorweave.ops.variable_scope import get_variable
from tensorweave.shapes import TensorShape

CategoricalIdsAndWeights = namedtuple("IdWeightPair", ["id_tensor", "weight_tensor"])


class _FeatureColumn:
    """What every column has: a name, a variable-scope name and a parse spec."""

    @property
    def _var_scope_name(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class _DenseColumn(_FeatureColumn):
    """A column that gives a dense float tensor of `_variable_shape` per example."""


class _CategoricalColumn(_FeatureColumn):
    """A column that gives a SparseTensor of ids in `[0, _num_buckets)`."""

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        return CategoricalIdsAndWeights(builder.get(self), None)


class _LazyBuilder:
    """Transforms each column once per `features` dict (TF's `_LazyBuilder`)."""

    def __init__(self, features: dict):
        self._features = dict(features)
        self._cache: dict = {}

    def get(self, key):
        if key in self._cache:
            return self._cache[key]
        if isinstance(key, str):
            value = self._raw(key)
        else:
            value = key._transform_feature(self)
        self._cache[key] = value
        return value

    def _raw(self, key: str):
        if key not in self._features:
            raise ValueError(f"The following feature is not in features dict: {key}")
        x = self._features[key]
        if isinstance(x, SparseTensor):
            return x
        x = convert_to_tensor(x)
        if x.shape.ndims == 0:
            raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {x}")
        return expand_dims(x, -1) if x.shape.ndims == 1 else x


# -- dense ----------------------------------------------------------------------------------
class _NumericColumn(_DenseColumn, namedtuple(
        "_NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):

    name = property(lambda self: self.key)
    _parse_example_spec = property(lambda self: {self.key: _fixed_len(self)})
    _variable_shape = property(lambda self: TensorShape(self.shape))

    def _transform_feature(self, builder):
        x = builder.get(self.key)
        if isinstance(x, SparseTensor):
            raise ValueError(f"The corresponding Tensor of numerical column must be a Tensor. "
                             f"SparseTensor is not supported. key: {self.key}")
        if self.normalizer_fn is not None:
            x = self.normalizer_fn(x)
        return cast(x, dtypes.float32)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        return builder.get(self)


def _fixed_len(col):
    from tensorweave.formats.example import FixedLenFeature
    return FixedLenFeature(col.shape, col.dtype, col.default_value)


class _BucketizedColumn(_DenseColumn, _CategoricalColumn, namedtuple(
        "_BucketizedColumn", ["source_column", "boundaries"])):

    name = property(lambda self: f"{self.source_column.name}_bucketized")
    _parse_example_spec = property(lambda self: self.source_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape(
        tuple(self.source_column.shape) + (len(self.boundaries) + 1,)))
    _num_buckets = property(lambda self: _elements(self.source_column.shape)
                            * (len(self.boundaries) + 1))

    def _transform_feature(self, builder):
        x = builder.get(self.source_column)
        edges = convert_to_tensor(list(self.boundaries), dtype=x.dtype)
        # NOTE: TF's Bucketize: the bucket is the number of boundaries <= x.
        return reduce_sum(cast(greater_equal(expand_dims(x, -1), edges), dtypes.int32), -1)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        return one_hot(builder.get(self), len(self.boundaries) + 1, on_value=1.0,
                       off_value=0.0)

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        buckets = builder.get(self)
        n = _elements(self.source_column.shape)
        batch = shape(buckets)[0]
        rows = reshape(tile(expand_dims(_range(batch), 1), stack([1, n])), [-1])
        cols = tile(_range(n), expand_dims(batch, 0))
        ids = add(reshape(buckets, [-1]), multiply(cols, len(self.boundaries) + 1))
        indices = cast(stack([rows, cols], axis=1), dtypes.int64)
        dense_shape = cast(stack([batch, n]), dtypes.int64)
        return CategoricalIdsAndWeights(
            SparseTensor(indices, cast(ids, dtypes.int64), dense_shape), None)


def _elements(shape_) -> int:
    return int(math.prod(shape_))


# -- categorical ------------------------------------------------------------------------------
class _IdentityCategoricalColumn(_CategoricalColumn, namedtuple(
        "_IdentityCategoricalColumn", ["key", "num_buckets", "default_value"])):

    name = property(lambda self: self.key)
    _num_buckets = property(lambda self: self.num_buckets)
    _parse_example_spec = property(lambda self: {self.key: _var_len(dtypes.int64)})

    def _transform_feature(self, builder):
        sp = to_sparse(builder.get(self.key))
        if not sp.values.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: "
                             f"{sp.values.dtype}")
        values = cast(sp.values, dtypes.int64)
        if self.default_value is not None:
            from tensorweave.ops.gather_ops import where
            from tensorweave.ops.math_ops import less, logical_and
            ok = logical_and(greater_equal(values, 0), less(values, self.num_buckets))
            values = where(ok, values, values * 0 + self.default_value)
        return SparseTensor(sp.indices, values, sp.dense_shape)


def _var_len(dtype):
    from tensorweave.formats.example import VarLenFeature
    return VarLenFeature(dtype)


class _VocabularyListCategoricalColumn(_CategoricalColumn, namedtuple(
        "_VocabularyListCategoricalColumn",
        ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])):

    name = property(lambda self: self.key)
    _num_buckets = property(lambda self: len(self.vocabulary_list) + self.num_oov_buckets)
    _parse_example_spec = property(lambda self: {self.key: _var_len(self.dtype)})

    def _transform_feature(self, builder):
        sp = to_sparse(builder.get(self.key))
        key_dtype = self.dtype
        if sp.values.dtype.is_integer:
            key_dtype = dtypes.int64
            sp = SparseTensor(sp.indices, cast(sp.values, dtypes.int64), sp.dense_shape)
        table = index_table_from_tensor(tuple(self.vocabulary_list), self.num_oov_buckets,
                                        self.default_value, dtype=key_dtype,
                                        name=f"{self.key}_lookup")
        return table.lookup(sp)


class _VocabularyFileCategoricalColumn(_CategoricalColumn, namedtuple(
        "_VocabularyFileCategoricalColumn",
        ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
         "default_value"])):

    name = property(lambda self: self.key)
    _num_buckets = property(lambda self: self.vocabulary_size + self.num_oov_buckets)
    _parse_example_spec = property(lambda self: {self.key: _var_len(self.dtype)})

    def _transform_feature(self, builder):
        sp = to_sparse(builder.get(self.key))
        key_dtype = self.dtype
        if sp.values.dtype.is_integer:
            key_dtype = dtypes.int64
            sp = SparseTensor(sp.indices, cast(sp.values, dtypes.int64), sp.dense_shape)
        table = index_table_from_file(self.vocabulary_file, self.num_oov_buckets,
                                      self.vocabulary_size, self.default_value,
                                      key_dtype=key_dtype, name=f"{self.key}_lookup")
        return table.lookup(sp)


class _HashedCategoricalColumn(_CategoricalColumn, namedtuple(
        "_HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])):

    name = property(lambda self: self.key)
    _num_buckets = property(lambda self: self.hash_bucket_size)
    _parse_example_spec = property(lambda self: {self.key: _var_len(self.dtype)})

    def _transform_feature(self, builder):
        sp = to_sparse(builder.get(self.key))
        values = sp.values if sp.values.dtype == dtypes.string else as_string(sp.values)
        ids = string_to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(sp.indices, ids, sp.dense_shape)


class _CrossedColumn(_CategoricalColumn, namedtuple(
        "_CrossedColumn", ["keys", "hash_bucket_size", "hash_key"])):

    name = property(lambda self: "_X_".join(sorted(
        k if isinstance(k, str) else k.name for k in self.keys)))
    _num_buckets = property(lambda self: self.hash_bucket_size)

    @property
    def _parse_example_spec(self) -> dict:
        spec: dict = {}
        for k in self.keys:
            spec.update({k: _var_len(dtypes.string)} if isinstance(k, str)
                        else k._parse_example_spec)
        return spec

    def _transform_feature(self, builder):
        # NOTE: raw string features stay dense, so SparseCross takes them after the sparse
        # ones (TF's order, which the hashes depend on).
        inputs = []
        for k in _leaf_keys(self):
            if isinstance(k, str):
                inputs.append(builder.get(k))
            else:
                inputs.append(k._get_sparse_tensors(builder).id_tensor)
        return sparse_cross_hashed(inputs, num_buckets=self.hash_bucket_size,
                                   hash_key=self.hash_key)


def _leaf_keys(crossed) -> list:
    """The keys of a cross with nested crosses flattened (TF's `_collect_leaf_level_keys`)."""
    out = []
    for k in crossed.keys:
        out.extend(_leaf_keys(k) if isinstance(k, _CrossedColumn) else [k])
    return out


# -- categorical -> dense ---------------------------------------------------------------------
class _IndicatorColumn(_DenseColumn, namedtuple("_IndicatorColumn", ["categorical_column"])):

    name = property(lambda self: f"{self.categorical_column.name}_indicator")
    _parse_example_spec = property(lambda self: self.categorical_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape([self.categorical_column._num_buckets]))

    def _transform_feature(self, builder):
        pair = self.categorical_column._get_sparse_tensors(builder)
        dense = sparse_tensor_to_dense(pair.id_tensor, default_value=-1)
        hot = one_hot(dense, self.categorical_column._num_buckets, on_value=1.0, off_value=0.0)
        if pair.weight_tensor is not None:   # NOTE: TF's sparse_merge: each id its weight
            w = sparse_tensor_to_dense(pair.weight_tensor, default_value=0.0)
            hot = multiply(hot, expand_dims(cast(w, dtypes.float32), -1))
        return reduce_sum(hot, axis=[-2])

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        return builder.get(self)


class _EmbeddingColumn(_DenseColumn, namedtuple(
        "_EmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                             "ckpt_to_load_from", "tensor_name_in_ckpt", "max_norm",
                             "trainable"])):

    name = property(lambda self: f"{self.categorical_column.name}_embedding")
    _parse_example_spec = property(lambda self: self.categorical_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape([self.dimension]))

    def _transform_feature(self, builder):
        return builder.get(self.categorical_column)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        ids = self.categorical_column._get_sparse_tensors(builder)
        weights = get_variable(
            "embedding_weights", shape=[self.categorical_column._num_buckets, self.dimension],
            dtype=dtypes.float32, initializer=self.initializer,
            trainable=self.trainable and (trainable is None or trainable))
        _add_to(weights, weight_collections)
        return combine(weights, ids.id_tensor, ids.weight_tensor, self.combiner)


class _WeightedCategoricalColumn(_CategoricalColumn, namedtuple(
        "_WeightedCategoricalColumn", ["categorical_column", "weight_feature_key", "dtype"])):

    name = property(lambda self: f"{self.categorical_column.name}_weighted_by_"
                                 f"{self.weight_feature_key}")
    _num_buckets = property(lambda self: self.categorical_column._num_buckets)

    @property
    def _parse_example_spec(self) -> dict:
        spec = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in spec:
            raise ValueError(f"Parse config {spec[self.weight_feature_key]} already exists "
                             f"for {self.weight_feature_key}.")
        spec[self.weight_feature_key] = _var_len(self.dtype)
        return spec

    def _transform_feature(self, builder):
        """(the ids, the weights as a SparseTensor: a dense weight input without its 0s)."""
        w = builder.get(self.weight_feature_key)
        if self.dtype != w.dtype.base_dtype:
            raise ValueError(f"Bad dtype, expected {self.dtype}, but got {w.dtype}.")
        if not isinstance(w, SparseTensor):
            w = to_sparse(w, ignore=0.0 if w.dtype.is_floating else 0)
        if not w.dtype.is_floating:
            w = SparseTensor(w.indices, cast(w.values, dtypes.float32), w.dense_shape)
        return builder.get(self.categorical_column), w

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        ids, weights = builder.get(self)
        return CategoricalIdsAndWeights(ids, weights)


class _SharedEmbeddingColumn(_DenseColumn, namedtuple(
        "_SharedEmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                                   "shared_embedding_collection_name", "ckpt_to_load_from",
                                   "tensor_name_in_ckpt", "max_norm", "trainable"])):
    """An embedding column whose `embedding_weights` variable is the one of its group: made by
    the first column built, found by the others in the graph collection named after the group
    (TF's `_SharedEmbeddingColumn`)."""

    name = property(lambda self: f"{self.categorical_column.name}_shared_embedding")
    _var_scope_name = property(lambda self: self.shared_embedding_collection_name)
    _parse_example_spec = property(lambda self: self.categorical_column._parse_example_spec)
    _variable_shape = property(lambda self: TensorShape([self.dimension]))

    def _transform_feature(self, builder):
        return builder.get(self.categorical_column)

    def _get_dense_tensor(self, builder, weight_collections=None, trainable=None):
        from tensorweave.framework.graph import add_to_collection, get_collection
        ids = self.categorical_column._get_sparse_tensors(builder, weight_collections,
                                                          trainable)
        shape_ = (self.categorical_column._num_buckets, self.dimension)
        shared = get_collection(self.shared_embedding_collection_name)
        if shared:
            if len(shared) > 1:
                raise ValueError(f"Collection {self.shared_embedding_collection_name} can only "
                                 f"contain one variable. Suggested fix A: Choose a unique name "
                                 f"for this collection. Suggested fix B: Do not add any "
                                 f"variables to this collection. The feature_column library "
                                 f"already adds a variable under the hood.")
            weights = shared[0]
            if tuple(weights.shape.as_list()) != shape_:
                raise ValueError(f"Shared embedding collection "
                                 f"{self.shared_embedding_collection_name} contains variable "
                                 f"{weights} of unexpected shape {weights.shape}. Expected "
                                 f"shape is {list(shape_)}. Suggested fix A: Choose a unique "
                                 f"name for this collection. Suggested fix B: Do not add any "
                                 f"variables to this collection. The feature_column library "
                                 f"already adds a variable under the hood.")
        else:
            weights = get_variable(
                "embedding_weights", shape=list(shape_), dtype=dtypes.float32,
                initializer=self.initializer,
                trainable=self.trainable and (trainable is None or trainable))
            _add_to(weights, weight_collections)
            add_to_collection(self.shared_embedding_collection_name, weights)
        return combine(weights, ids.id_tensor, ids.weight_tensor, self.combiner)


def _add_to(var, collections) -> None:
    from tensorweave.framework.graph import add_to_collections
    if collections:
        add_to_collections(list(collections), var)


# -- constructors (tf.feature_column.*) -------------------------------------------------------
def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32,
                   normalizer_fn=None):
    """A dense float column of `shape` read from `features[key]`."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return _NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def bucketized_column(source_column, boundaries):
    """One-hot buckets of a numeric column; `boundaries` must be sorted."""
    if not isinstance(source_column, _NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: "
                         f"{source_column}")
    boundaries = tuple(float(b) for b in boundaries)
    if not boundaries or any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be a sorted list.")
    return _BucketizedColumn(source_column, boundaries)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer ids used as they are (`[0, num_buckets)`)."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    return _IdentityCategoricalColumn(key, num_buckets, default_value)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """Ids by position in `vocabulary_list`; others `default_value` or an OOV bucket."""
    vocabulary_list = tuple(vocabulary_list)
    if not vocabulary_list:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: "
                         f"{key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: "
                         f"{key}")
    if num_oov_buckets and default_value != -1:
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
    inferred = dtypes.string if isinstance(vocabulary_list[0], (str, bytes)) else dtypes.int64
    dtype = dtypes.as_dtype(dtype) if dtype is not None else inferred
    return _VocabularyListCategoricalColumn(key, vocabulary_list, dtype, default_value,
                                            num_oov_buckets)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=dtypes.string):
    """Ids by line number in `vocabulary_file`."""
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        with open(vocabulary_file, "rb") as f:
            vocabulary_size = sum(1 for _ in f)
    if num_oov_buckets and default_value is not None:
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
    return _VocabularyFileCategoricalColumn(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, dtypes.as_dtype(dtype),
        -1 if default_value is None else default_value)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """Ids as Fingerprint64(value) % hash_bucket_size (ints hashed as their decimal text)."""
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    return _HashedCategoricalColumn(key, hash_bucket_size, dtypes.as_dtype(dtype))


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """Hashed crosses of string keys and categorical columns (FingerprintCat64, as TF)."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for k in keys:
        if not isinstance(k, (str, _CategoricalColumn)) or isinstance(
                k, _HashedCategoricalColumn):
            raise ValueError(f"Unsupported key type. All keys must be either string, or "
                             f"categorical column except _HashedCategoricalColumn. Given: {k}")
    return _CrossedColumn(tuple(keys), hash_bucket_size, hash_key)


def indicator_column(categorical_column):
    """A multi-hot dense view of a categorical column."""
    return _IndicatorColumn(categorical_column)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A dense `dimension`-vector per example: the `combiner` of its ids' embeddings."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if initializer is None:
        initializer = truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    return _EmbeddingColumn(categorical_column, dimension, combiner, initializer,
                            ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    """`categorical_column` with a weight per id, read from `features[weight_feature_key]`
    (a SparseTensor of the ids' indices, or a dense tensor whose 0s mean "no weight")."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    if not weight_feature_key:
        raise ValueError(f"Missing weight_feature_key for {categorical_column}.")
    return _WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True):
    """Embedding columns (in the order given) that share one `embedding_weights` variable,
    in scope and collection `shared_embedding_collection_name` (default: the columns' names
    sorted and joined by `_`, then `_shared_embedding`).

    Raises:
      ValueError: a bad dimension or initializer, only one of the two checkpoint arguments,
        or columns of different types or numbers of buckets.
    """
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if initializer is None:
        initializer = truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    categorical_columns = list(categorical_columns)
    ordered = sorted(categorical_columns, key=lambda c: c.name)
    _check_shareable(ordered)
    if not shared_embedding_collection_name:
        shared_embedding_collection_name = "_".join(c.name for c in ordered) + \
            "_shared_embedding"
    return [_SharedEmbeddingColumn(c, dimension, combiner, initializer,
                                   shared_embedding_collection_name, ckpt_to_load_from,
                                   tensor_name_in_ckpt, max_norm, trainable)
            for c in categorical_columns]


def _check_shareable(ordered) -> None:
    """All categorical, of one type (weighted ones by their inner column), one bucket count."""
    c0: Any = ordered[0]
    if not isinstance(c0, _CategoricalColumn):
        raise ValueError(f"All categorical_columns must be subclasses of _CategoricalColumn. "
                         f"Given: {c0}, of type: {type(c0)}")
    num_buckets = getattr(c0, "_num_buckets", None)   # NOTE: every categorical column has it
    if isinstance(c0, _WeightedCategoricalColumn):
        c0 = c0.categorical_column
    for c in ordered[1:]:
        if isinstance(c, _WeightedCategoricalColumn):
            c = c.categorical_column
        if not isinstance(c, type(c0)):
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must "
                             f"have the same type, or be weighted_categorical_column of the "
                             f"same type. Given column: {c0} of type: {type(c0)} does not "
                             f"match given column: {c} of type: {type(c)}")
        if num_buckets != c._num_buckets:
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must "
                             f"have the same number of buckets. Given column: {c0} with "
                             f"buckets: {num_buckets} does  not match column: {c} with "
                             f"buckets: {c._num_buckets}")


def make_parse_example_spec(feature_columns) -> dict:
    """The `parse_example` spec every column of `feature_columns` needs."""
    spec: dict = {}
    for col in feature_columns:
        for k, v in col._parse_example_spec.items():
            if k in spec and spec[k] != v:
                raise ValueError(f"feature_columns contain different parse_spec for key {k}. "
                                 f"Given {v} and {spec[k]}")
            spec[k] = v
    return spec
