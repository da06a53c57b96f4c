"""TF 1.15's canned estimators over feature columns, with TF's variable names:
`dnn/input_from_feature_columns/input_layer/...`, `dnn/hiddenlayer_<i>/kernel|bias`,
`dnn/logits/kernel|bias`, `linear/linear_model/<column>/weights`,
`linear/linear_model/bias_weights` — so their checkpoints restore in TF's graphs.
"""

from __future__ import annotations

import math

from tensorweave.estimator.canned.head import classification_head, regression_head
from tensorweave.estimator.deps import tf
from tensorweave.estimator.estimator import Estimator

_OPTIMIZERS = {"Adagrad": "AdagradOptimizer", "Adam": "AdamOptimizer",
               "Ftrl": "FtrlOptimizer", "RMSProp": "RMSPropOptimizer",
               "SGD": "GradientDescentOptimizer"}




def get_optimizer_instance(opt, learning_rate=None):
    """An optimizer from a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'), an
    instance, or a no-argument callable returning one."""
    if isinstance(opt, str):
        if opt not in _OPTIMIZERS:
            raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: "
                             f"{tuple(sorted(_OPTIMIZERS))}")
        return getattr(tf.train, _OPTIMIZERS[opt])(learning_rate=learning_rate)
    if callable(opt) and not isinstance(opt, tf.train.Optimizer):
        opt = opt()
    if not isinstance(opt, tf.train.Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt


def _dnn_logits(features, feature_columns, hidden_units, units, activation, dropout, mode):
    with tf.variable_scope("input_from_feature_columns"):
        net = tf.feature_column.input_layer(features, feature_columns)
    for i, n in enumerate(hidden_units):
        net = tf.layers.dense(net, n, activation=activation,
                              kernel_initializer=tf.glorot_uniform_initializer(),
                              name=f"hiddenlayer_{i}")
        if dropout is not None and mode == tf.estimator.ModeKeys.TRAIN:
            net = tf.layers.dropout(net, rate=dropout, training=True)
    return tf.layers.dense(net, units, activation=None,
                           kernel_initializer=tf.glorot_uniform_initializer(), name="logits")


def _linear_logits(features, feature_columns, units, sparse_combiner):
    return tf.feature_column.linear_model(features, feature_columns, units=units,
                                             sparse_combiner=sparse_combiner)


def _combined_model_fn(features, labels, mode, head, linear_columns, linear_optimizer,
                       dnn_columns, dnn_optimizer, hidden_units, activation, dropout,
                       sparse_combiner, linear_lr, dnn_lr):
    """TF's `_dnn_linear_combined_model_fn`: each part trained by its own optimizer."""
    parts = []
    if dnn_columns:
        with tf.variable_scope("dnn", values=list(features.values())):
            parts.append(("dnn", get_optimizer_instance(dnn_optimizer, dnn_lr),
                          _dnn_logits(features, dnn_columns, hidden_units,
                                      head.logits_dimension, activation, dropout, mode)))
    if linear_columns:
        with tf.variable_scope("linear", values=list(features.values())):
            parts.append(("linear", get_optimizer_instance(linear_optimizer, linear_lr),
                          _linear_logits(features, linear_columns, head.logits_dimension,
                                         sparse_combiner)))
    logits = parts[0][2] if len(parts) == 1 else tf.add(parts[0][2], parts[1][2])

    def train_op_fn(loss):
        step = tf.train.get_global_step()
        if len(parts) == 1:
            return parts[0][1].minimize(loss, global_step=step)
        ops = [opt.minimize(loss, var_list=tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope)) for scope, opt, _ in parts]
        with tf.control_dependencies([tf.group(*ops)]):
            return tf.assign_add(step, 1).op

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)


def _check_columns(columns, what: str) -> list:
    columns = list(columns or [])
    if not columns:
        raise ValueError(f"{what} should not be empty.")
    return columns


class _Canned(Estimator):
    def __init__(self, head, model_dir, config, warm_start_from=None, **parts):
        def model_fn(features, labels, mode, config):
            return _combined_model_fn(features, labels, mode, head, **parts)
        super().__init__(model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


def _relu():
    return tf.nn.relu


def _linear_lr(columns, cap):
    return min(cap, 1.0 / math.sqrt(len(columns)))


class DNNClassifier(_Canned):
    """A feed-forward classifier (Adagrad, learning rate 0.05, by default)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=None, dropout=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=None, batch_norm=False):
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, config, warm_start_from,
                         linear_columns=None, linear_optimizer=None,
                         dnn_columns=_check_columns(feature_columns, "feature_columns"),
                         dnn_optimizer=optimizer, hidden_units=list(hidden_units),
                         activation=activation_fn or _relu(), dropout=dropout,
                         sparse_combiner="sum", linear_lr=None, dnn_lr=0.05)


class DNNRegressor(_Canned):
    """A feed-forward regressor (Adagrad, learning rate 0.05, by default)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=None, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=None, batch_norm=False):
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, config, warm_start_from,
                         linear_columns=None, linear_optimizer=None,
                         dnn_columns=_check_columns(feature_columns, "feature_columns"),
                         dnn_optimizer=optimizer, hidden_units=list(hidden_units),
                         activation=activation_fn or _relu(), dropout=dropout,
                         sparse_combiner="sum", linear_lr=None, dnn_lr=0.05)


class LinearClassifier(_Canned):
    """A linear classifier (FTRL, learning rate min(0.2, 1/sqrt(#columns)), by default)."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=None, sparse_combiner="sum"):
        cols = _check_columns(feature_columns, "feature_columns")
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, config, warm_start_from,
                         linear_columns=cols, linear_optimizer=optimizer, dnn_columns=None,
                         dnn_optimizer=None, hidden_units=[], activation=None, dropout=None,
                         sparse_combiner=sparse_combiner, linear_lr=_linear_lr(cols, 0.2),
                         dnn_lr=None)


class LinearRegressor(_Canned):
    """A linear regressor (FTRL by default)."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=None, sparse_combiner="sum"):
        cols = _check_columns(feature_columns, "feature_columns")
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, config, warm_start_from,
                         linear_columns=cols, linear_optimizer=optimizer, dnn_columns=None,
                         dnn_optimizer=None, hidden_units=[], activation=None, dropout=None,
                         sparse_combiner=sparse_combiner, linear_lr=_linear_lr(cols, 0.2),
                         dnn_lr=None)


class DNNLinearCombinedClassifier(_Canned):
    """Wide (linear, FTRL) and deep (DNN, Adagrad) parts summed into one set of logits."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=None, dnn_dropout=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=None, batch_norm=False,
                 linear_sparse_combiner="sum"):
        linear = list(linear_feature_columns or [])
        dnn = list(dnn_feature_columns or [])
        if not linear and not dnn:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be "
                             "defined.")
        if dnn and not dnn_hidden_units:
            raise ValueError(f"dnn_hidden_units must be defined when dnn_feature_columns is "
                             f"specified. Given: {dnn_hidden_units}")
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, config, warm_start_from,
                         linear_columns=linear, linear_optimizer=linear_optimizer,
                         dnn_columns=dnn, dnn_optimizer=dnn_optimizer,
                         hidden_units=list(dnn_hidden_units or []),
                         activation=dnn_activation_fn or _relu(), dropout=dnn_dropout,
                         sparse_combiner=linear_sparse_combiner,
                         linear_lr=_linear_lr(linear, 0.005) if linear else None,
                         dnn_lr=0.001)
