"""`tf.keras.backend` in graph mode, as TF 1.x had it: one session per process on the
default graph, a learning-phase placeholder per graph, and the tensor functions TF1 programs
call through `K.`.

`get_session()` returns the session `set_session` installed, or else a session on the
default graph that it creates once per graph; like TF1's Keras it initializes the variables
it has not initialized yet each time it is asked, so `model.fit` works without an explicit
`global_variables_initializer()`. `clear_session()` resets the default graph and forgets the
session. `learning_phase()` is a bool placeholder with default False (`keras_learning_phase`);
`fit` feeds it True; `set_learning_phase(v)` fixes it to a Python value instead.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from tensorweave import dtypes
from tensorweave.autodiff import gradients as _gradients
from tensorweave.client.session import Session
from tensorweave.framework.graph import get_default_graph, reset_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    creation_ops,
    gather_ops,
    joining_ops,
    math_matmul_ops,
    math_ops,
    nn_losses,
    nn_norm,
    nn_ops,
    random_ops,
    reduction_ops,
)
from tensorweave.ops import variables as variables_mod
from tensorweave.ops.constant_op import constant as _constant
from tensorweave.ops.control_flow_ops import cond as _cond
from tensorweave.ops.control_flow_ops import group as _group

_SESSION: dict = {"session": None, "set": False}
_PHASE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # graph → placeholder
_FIXED_PHASE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph → 0/1
_INITIALIZED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session → var ids
_UIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CONFIG: dict[str, Any] = {"floatx": "float32", "epsilon": 1e-7,
                           "image_data_format": "channels_last"}


# -- configuration -------------------------------------------------------------------------------
def floatx() -> str:
    return _CONFIG["floatx"]


def set_floatx(value: str) -> None:
    _CONFIG["floatx"] = dtypes.as_dtype(value).name


def epsilon() -> float:
    return _CONFIG["epsilon"]


def set_epsilon(value: float) -> None:
    _CONFIG["epsilon"] = float(value)


def image_data_format() -> str:
    return _CONFIG["image_data_format"]


def set_image_data_format(value: str) -> None:
    if value not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {value}")
    _CONFIG["image_data_format"] = value


def get_uid(prefix: str = "") -> int:
    """1, 2, ... per graph and prefix (Keras's layer-name counters)."""
    uids = _UIDS.setdefault(get_default_graph(), {})
    uids[prefix] = uids.get(prefix, 0) + 1
    return uids[prefix]


def unique_object_name(base: str) -> str:
    """`dense`, then `dense_1`, `dense_2`, ... in the default graph."""
    n = get_uid(base)
    return base if n == 1 else f"{base}_{n - 1}"


def reset_uids() -> None:
    _UIDS.pop(get_default_graph(), None)


# -- session and learning phase ------------------------------------------------------------------
def get_session():
    """The Keras session, its uninitialized variables initialized (see the module docstring)."""
    sess = _SESSION["session"]
    if sess is None or (not _SESSION["set"] and sess.graph is not get_default_graph()) or \
            getattr(sess, "_closed", False):
        sess = Session(graph=get_default_graph())
        _SESSION["session"], _SESSION["set"] = sess, False
    _initialize_variables(sess)
    return sess


def set_session(session) -> None:
    """Makes `session` the one Keras uses."""
    _SESSION["session"], _SESSION["set"] = session, session is not None


def clear_session() -> None:
    """Resets the default graph (and its name counters) and forgets the Keras session."""
    sess = _SESSION["session"]
    if sess is not None and not _SESSION["set"]:
        sess.close()
    _SESSION["session"], _SESSION["set"] = None, False
    reset_default_graph()


def _initialize_variables(sess) -> None:
    done = _INITIALIZED.setdefault(sess, set())
    fresh = [v for v in sess.graph.get_collection("variables") if id(v) not in done]
    if not fresh:
        return
    flags = sess.run([variables_mod.is_variable_initialized(v) for v in fresh])
    todo = [v.initializer for v, ok in zip(fresh, flags) if not ok]
    if todo:
        sess.run(todo)
    done.update(id(v) for v in fresh)


def learning_phase():
    """The learning phase: a fixed 0/1 after `set_learning_phase`, else the graph's bool
    placeholder `keras_learning_phase` (default False)."""
    graph = get_default_graph()
    if graph in _FIXED_PHASE:
        return _FIXED_PHASE[graph]
    if graph not in _PHASE:
        with graph.name_scope(""):
            _PHASE[graph] = array_ops.placeholder_with_default(
                False, shape=[], name="keras_learning_phase")
    return _PHASE[graph]


def set_learning_phase(value) -> None:
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    _FIXED_PHASE[get_default_graph()] = int(value)


def learning_phase_feed(training: bool) -> dict:
    """The feed that sets the learning phase for one run ({} when it is fixed)."""
    phase = learning_phase()
    return {phase: bool(training)} if isinstance(phase, Tensor) else {}


def in_train_phase(x, alt, training=None):
    training = learning_phase() if training is None else training
    if not isinstance(training, Tensor):
        chosen = x if training else alt
        return chosen() if callable(chosen) else chosen
    return _cond(training, lambda: x() if callable(x) else x,
                 lambda: alt() if callable(alt) else alt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


# -- variables and values ------------------------------------------------------------------------
def variable(value, dtype=None, name=None, constraint=None):
    dtype = dtype or floatx()
    return variables_mod.Variable(np.asarray(value, dtype=dtypes.as_dtype(dtype).np_dtype),
                                  name=name, constraint=constraint)


def constant(value, dtype=None, shape=None, name=None):
    return _constant(value, dtype=dtype or floatx(), shape=shape, name=name)


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    if shape is None and ndim is not None:
        shape = (None,) * ndim
    return array_ops.placeholder(dtype or floatx(), shape=shape, name=name)


def is_placeholder(x) -> bool:
    return isinstance(x, Tensor) and x.op.type in ("Placeholder", "PlaceholderWithDefault")


def get_value(x):
    return get_session().run(x)


def batch_get_value(tensors) -> list:
    return get_session().run(list(tensors)) if tensors else []


def set_value(x, value) -> None:
    batch_set_value([(x, value)])


def batch_set_value(pairs) -> None:
    """Assigns numpy values to variables (one run; assign ops are cached per variable)."""
    sess = get_session()
    ops, feed = [], {}
    for var, value in pairs:
        value = np.asarray(value, dtype=var.dtype.base_dtype.np_dtype)
        holder, assign = _assign_op(var)
        ops.append(assign)
        feed[holder] = value
    if ops:
        sess.run(ops, feed)


_ASSIGNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _assign_op(var):
    graph = var.graph
    cache = _ASSIGNS.setdefault(graph, {})
    if id(var) not in cache:
        with graph.as_default(), graph.name_scope(""):
            holder = array_ops.placeholder(var.dtype.base_dtype, shape=var.shape)
            cache[id(var)] = (holder, var.assign(holder))
    return cache[id(var)]


def eval(x):  # noqa: A001 - Keras's name
    return get_value(x)


def int_shape(x):
    shape = x.shape
    return None if shape.ndims is None else tuple(shape.as_list())


def ndim(x):
    return x.shape.ndims


def dtype(x) -> str:
    return x.dtype.base_dtype.name


def count_params(x) -> int:
    return int(np.prod(int_shape(x)))


class Function:
    """`K.function(inputs, outputs, updates)`: a callable that feeds `inputs` and fetches
    `outputs` (running `updates` too) in the Keras session."""

    def __init__(self, inputs, outputs, updates=None, name=None, **kwargs):
        self.inputs, self.outputs = list(inputs), list(outputs)
        self.updates = _group(*updates) if updates else None

    def __call__(self, inputs):
        feed = dict(zip(self.inputs, inputs))
        fetches = self.outputs + ([self.updates] if self.updates is not None else [])
        return get_session().run(fetches, feed)[:len(self.outputs)]


def function(inputs, outputs, updates=None, name=None, **kwargs):
    return Function(inputs, outputs, updates=updates, name=name, **kwargs)


def gradients(loss, variables):
    return _gradients(loss, variables, colocate_gradients_with_ops=True)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [array_ops.stop_gradient(v) for v in variables]
    return array_ops.stop_gradient(variables)


# -- tensor functions ----------------------------------------------------------------------------
def _axis(axis):
    return list(axis) if isinstance(axis, tuple) else axis


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return reduction_ops.reduce_sum(x, _axis(axis), keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    return reduction_ops.reduce_mean(x, _axis(axis), keepdims=keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return reduction_ops.reduce_max(x, _axis(axis), keepdims=keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return reduction_ops.reduce_min(x, _axis(axis), keepdims=keepdims)


def prod(x, axis=None, keepdims=False):
    return reduction_ops.reduce_prod(x, _axis(axis), keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return math_ops.sqrt(var(x, axis, keepdims))


def var(x, axis=None, keepdims=False):
    m = mean(x, axis, keepdims=True)
    return mean(math_ops.square(x - m), axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return reduction_ops.reduce_any(math_ops.cast(x, dtypes.bool_), _axis(axis), keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return reduction_ops.reduce_all(math_ops.cast(x, dtypes.bool_), _axis(axis), keepdims)


def argmax(x, axis=-1):
    return reduction_ops.argmax(x, axis)


def argmin(x, axis=-1):
    return reduction_ops.argmin(x, axis)


def dot(x, y):
    if ndim(x) is not None and ndim(x) > 2 or ndim(y) is not None and ndim(y) > 2:
        return math_matmul_ops.tensordot(x, y, [[ndim(x) - 1], [ndim(y) - 2 if ndim(y) > 1 else 0]])
    return math_matmul_ops.matmul(x, y)


def batch_dot(x, y, axes=None):
    return math_matmul_ops.matmul(x, y, adjoint_b=axes == [2, 2] or axes == (2, 2))


def transpose(x):
    return joining_ops.transpose(x)


def reshape(x, shape):
    return array_ops.reshape(x, shape)


def shape(x):
    return array_ops.shape(x)


def cast(x, dtype):
    return math_ops.cast(x, dtype)


def concatenate(tensors, axis=-1):
    return joining_ops.concat(list(tensors), axis)


def stack(x, axis=0):
    return joining_ops.stack(x, axis=axis)


def expand_dims(x, axis=-1):
    return array_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return array_ops.squeeze(x, [axis])


def flatten(x):
    return array_ops.reshape(x, [-1])


def batch_flatten(x):
    return array_ops.reshape(x, joining_ops.stack([-1, reduction_ops.reduce_prod(
        array_ops.shape(x)[1:])]))


def tile(x, n):
    return joining_ops.tile(x, n)


def repeat(x, n):
    return joining_ops.tile(array_ops.expand_dims(x, 1), [1, n, 1])


def gather(reference, indices):
    return gather_ops.gather(reference, indices)


def zeros(shape, dtype=None, name=None):
    return variable(np.zeros(shape), dtype, name)


def ones(shape, dtype=None, name=None):
    return variable(np.ones(shape), dtype, name)


def zeros_like(x, dtype=None, name=None):
    return creation_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return creation_ops.ones_like(x, dtype=dtype, name=name)


def square(x):
    return math_ops.square(x)


def sqrt(x):
    zero = _constant(0.0, x.dtype.base_dtype)
    return math_ops.sqrt(math_ops.maximum(x, zero))


def exp(x):
    return math_ops.exp(x)


def log(x):
    return math_ops.log(x)


def abs(x):  # noqa: A001
    return math_ops.abs(x)


def pow(x, a):  # noqa: A001
    return math_ops.pow(x, a)


def clip(x, min_value, max_value):
    if max_value is not None and min_value is not None and max_value < min_value:
        max_value = min_value
    return math_matmul_ops.clip_by_value(x, min_value, max_value)


def maximum(x, y):
    return math_ops.maximum(x, y)


def minimum(x, y):
    return math_ops.minimum(x, y)


def equal(x, y):
    return math_ops.equal(x, y)


def not_equal(x, y):
    return math_ops.not_equal(x, y)


def greater(x, y):
    return math_ops.greater(x, y)


def less(x, y):
    return math_ops.less(x, y)


def sign(x):
    return math_ops.sign(x)


def round(x):  # noqa: A001
    return math_ops.round(x)


def switch(condition, then_expression, else_expression):
    return _cond(condition, lambda: then_expression() if callable(then_expression)
                 else then_expression,
                 lambda: else_expression() if callable(else_expression) else else_expression)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    y = nn_ops.relu(x) if not alpha else nn_ops.leaky_relu(x, alpha)
    return y if max_value is None else math_ops.minimum(y, max_value)


def elu(x, alpha=1.0):
    y = nn_ops.elu(x)
    return y if alpha == 1 else gather_ops.where(x > 0, y, alpha * y)


def softmax(x, axis=-1):
    return nn_ops.softmax(x, axis=axis)


def softplus(x):
    return nn_ops.softplus(x)


def softsign(x):
    return nn_ops.softsign(x)


def sigmoid(x):
    return math_ops.sigmoid(x)


def hard_sigmoid(x):
    return clip(0.2 * x + 0.5, 0.0, 1.0)


def tanh(x):
    return math_ops.tanh(x)


def l2_normalize(x, axis=None):
    return nn_norm.l2_normalize(x, axis)


def dropout(x, level, noise_shape=None, seed=None):
    return random_ops.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random_ops.random_normal(shape, mean, stddev, dtype=dtype or floatx(), seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return random_ops.random_uniform(shape, minval, maxval, dtype=dtype or floatx(), seed=seed)


def _clipped(output):
    eps = _constant(epsilon(), output.dtype.base_dtype)
    return math_matmul_ops.clip_by_value(output, eps, 1.0 - eps)


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Keras's: probabilities are renormalized along `axis` and clipped to [eps, 1 - eps]."""
    if from_logits:
        return nn_losses.softmax_cross_entropy_with_logits_v2(labels=target, logits=output,
                                                           axis=axis)
    output = output / reduction_ops.reduce_sum(output, axis, keepdims=True)
    return -reduction_ops.reduce_sum(target * math_ops.log(_clipped(output)), axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target = math_ops.cast(array_ops.reshape(target, [-1]), dtypes.int64)
    if not from_logits:
        output = math_ops.log(_clipped(output))
    logits = array_ops.reshape(output, [-1, array_ops.shape(output)[-1]])
    loss = nn_losses.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logits)
    if output.shape.ndims is not None and output.shape.ndims > 2:
        return array_ops.reshape(loss, array_ops.shape(output)[:-1])
    return loss


def binary_crossentropy(target, output, from_logits=False):
    if not from_logits:
        output = _clipped(output)
        output = math_ops.log(output / (1 - output))
    return nn_losses.sigmoid_cross_entropy_with_logits(labels=target, logits=output)


def to_tensor(x, dtype=None):
    return convert_to_tensor(x, dtype=dtype)


def ctc_label_dense_to_sparse(labels, label_lengths):
    """The first `label_lengths[i]` labels of each row of `labels` as a SparseTensor (int64
    indices [row, position], the dense shape of `labels`)."""
    from tensorweave import dtypes as _dt
    from tensorweave.ops.sparse_tensor import SparseTensor

    labels = convert_to_tensor(labels)
    width = array_ops.shape(labels)[1]
    mask = creation_ops.sequence_mask(label_lengths, maxlen=width)
    indices = gather_ops.where(mask)
    values = gather_ops.gather_nd(labels, indices)
    return SparseTensor(indices, values, math_ops.cast(array_ops.shape(labels), _dt.int64))
