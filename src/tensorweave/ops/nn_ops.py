"""NN ops: activations and their gradients, softmax, bias add, LRN, top-k, and the `tf.nn`
wrappers of those (convolution: `nn_conv.py`; losses: `nn_losses.py`; normalization:
`nn_norm.py`; composites such as embedding_lookup: `nn_impl.py`).
"""

from __future__ import annotations

from tensorweave import dtypes, errors
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import merge_all_inputs, scalar, unchanged
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_FLOATS = "{half, bfloat16, float, double}"
_REAL = "realnumbertype"


def with_rank_at_least(ctx, i: int, rank: int):
    """Input i's dims (None for unknown rank); fails below `rank`."""
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) < rank:
        raise ctx.fail(f"Shape must be at least rank {rank} but is rank {len(dims)}")
    return dims


def _with_rank(ctx, i: int, rank: int):
    dims = ctx.input_dims(i)
    if dims is None:
        return (None,) * rank
    if len(dims) != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {len(dims)}")
    return dims


def _merge(ctx, a, b):
    if a is not None and b is not None and a != b:
        raise ctx.fail(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


# -- activations --------------------------------------------------------------------------------
def _activation(name: str, types: str, extra: tuple = (), inputs=("features",),
                out="activations") -> None:
    register_op(name, inputs=[f"{i}: T" for i in inputs], outputs=[f"{out}: T"],
                attrs=[*extra, f"T: {types}"],
                shape_fn=unchanged if len(inputs) == 1 else merge_all_inputs)


_activation("Relu", "{realnumbertype, qint8}")
_activation("Relu6", _REAL)
_activation("Elu", _FLOATS)
_activation("Selu", _FLOATS)
_activation("LeakyRelu", f"{_FLOATS} = DT_FLOAT", ("alpha: float = 0.2",))
_activation("Softplus", _FLOATS)
_activation("Softsign", _FLOATS)
_GRAD = {"inputs": ("gradients", "features"), "out": "backprops"}
_GRAD_OUT = {"inputs": ("gradients", "outputs"), "out": "backprops"}
_activation("ReluGrad", _REAL, **_GRAD)
_activation("Relu6Grad", _REAL, **_GRAD)
_activation("EluGrad", _FLOATS, **_GRAD_OUT)
_activation("SeluGrad", _FLOATS, **_GRAD_OUT)
_activation("SoftplusGrad", _FLOATS, **_GRAD)
_activation("SoftsignGrad", _FLOATS, **_GRAD)
_activation("LeakyReluGrad", f"{_FLOATS} = DT_FLOAT", ("alpha: float = 0.2",), **_GRAD)


def _softmax_shape(ctx):
    with_rank_at_least(ctx, 0, 1)
    return ctx.input_shape(0)


register_op("Softmax", inputs=["logits: T"], outputs=["softmax: T"], attrs=[f"T: {_FLOATS}"],
            shape_fn=_softmax_shape)
register_op("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"],
            attrs=[f"T: {_FLOATS}"], shape_fn=_softmax_shape)


def relu(features, name=None):
    """`tf.nn.relu`: max(features, 0), op "Relu"."""
    return apply_op("Relu", features, name=name)


def relu6(features, name=None):
    """`tf.nn.relu6`: min(max(features, 0), 6), op "Relu6"."""
    with OpScope(name, "Relu6", [features]) as s:
        features = convert_to_tensor(features, name="features")
        return s.apply("Relu6", features)


def elu(features, name=None):
    """`tf.nn.elu`: exp(x) - 1 for x < 0, else x."""
    return apply_op("Elu", features, name=name)


def selu(features, name=None):
    """`tf.nn.selu`: scale * elu with alpha (Klambauer et al.)."""
    return apply_op("Selu", features, name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """`tf.nn.leaky_relu`: x if x > 0 else alpha * x (integers are cast to float32)."""
    with OpScope(name, "LeakyRelu", [features]) as s:
        features = convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = apply_op("Cast", features, DstT=dtypes.float32, name="Cast")
        return s.apply("LeakyRelu", features, alpha=float(alpha))


def softplus(features, name=None):
    """`tf.nn.softplus`: log(exp(features) + 1)."""
    return apply_op("Softplus", features, name=name)


def softsign(features, name=None):
    """`tf.nn.softsign`: features / (abs(features) + 1)."""
    return apply_op("Softsign", features, name=name)


def _axis_op(op_type: str, logits, axis, name):
    """TF's `_wrap_2d_function`: op over the last axis, transposing another axis there."""
    logits = convert_to_tensor(logits)
    axis = -1 if axis is None else axis
    rank = logits.shape.ndims
    if axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, logits, name=name)
    if rank is None:
        raise ValueError(f"{op_type} over axis {axis} needs a known rank")
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(
            None, None, f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the "
                        f"number of dimensions in the input. Received: dim={axis}")
    perm = list(range(rank))
    perm[axis % rank], perm[-1] = perm[-1], perm[axis % rank]
    swapped = apply_op("Transpose", logits, perm, name="transpose")
    out = apply_op("Transpose", apply_op(op_type, swapped), perm, name=name or "transpose")
    out.set_shape(logits.shape)
    return out


def softmax(logits, axis=None, name=None, dim=None):
    """TF1 `tf.nn.softmax`: exp(logits) / reduce_sum(exp(logits), axis), op "Softmax"."""
    return _axis_op("Softmax", logits, dim if axis is None else axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """TF1 `tf.nn.log_softmax`: logits - log(reduce_sum(exp(logits), axis))."""
    return _axis_op("LogSoftmax", logits, dim if axis is None else axis, name)


# -- bias add -----------------------------------------------------------------------------------
def _bias_add_shape(ctx):
    nchw = ctx.attr("data_format") == "NCHW"
    dims = with_rank_at_least(ctx, 0, 3 if nchw else 2)
    bias = _with_rank(ctx, 1, 1)
    if dims is None:
        return TensorShape(None)
    axis = 1 if nchw else len(dims) - 1
    out = list(dims)
    out[axis] = _merge(ctx, dims[axis], bias[0])
    return TensorShape(out)


def _bias_add_grad_shape(ctx):
    nchw = ctx.attr("data_format") == "NCHW"
    dims = with_rank_at_least(ctx, 0, 3 if nchw else 2)
    if dims is None:
        return TensorShape([None])
    return TensorShape([dims[1] if nchw else dims[-1]])


_FORMAT = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
register_op("BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
            attrs=["T: numbertype", _FORMAT], shape_fn=_bias_add_shape)
register_op("BiasAddV1", inputs=["value: T", "bias: T"], outputs=["output: T"],
            attrs=["T: numbertype"], shape_fn=_bias_add_shape)
register_op("BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
            attrs=["T: numbertype", _FORMAT], shape_fn=_bias_add_grad_shape)


def _bias_format(data_format):
    if data_format is None:
        return "NHWC"
    if data_format.startswith("NC"):
        return "NCHW"
    if data_format.startswith("N") and data_format.endswith("C"):
        return "NHWC"
    raise ValueError(f"`data_format` must be of the form `N...C` or `NC...`. Received: "
                     f"data_format={data_format}")


def bias_add(value, bias, data_format=None, name=None):
    """`tf.nn.bias_add`: value + bias along the channel axis, op "BiasAdd".

    Raises:
      ValueError: a bias length that differs from the channel dimension, or a bad format.
    """
    data_format = _bias_format(data_format)
    with OpScope(name, "BiasAdd", [value, bias]) as s:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        return s.apply("BiasAdd", value, bias, data_format=data_format)


def bias_add_v1(value, bias, name=None):
    """The deprecated BiasAddV1 (last-axis bias)."""
    with OpScope(name, "BiasAddV1", [value, bias]) as s:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        return s.apply("BiasAddV1", value, bias)


def xw_plus_b(x, weights, biases, name=None):
    """`tf.nn.xw_plus_b`: matmul(x, weights) + biases, the BiasAdd named "xw_plus_b"."""
    with OpScope(name, "xw_plus_b", [x, weights, biases]) as s:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        mm = apply_op("MatMul", x, weights, name="MatMul")
        return bias_add(mm, biases, name=s.name)


def relu_layer(x, weights, biases, name=None):
    """`tf.nn.relu_layer`: relu(matmul(x, weights) + biases)."""
    with OpScope(name, "relu_layer", [x, weights, biases]) as s:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        mm = apply_op("MatMul", x, weights, name="MatMul")
        return s.apply("Relu", bias_add(mm, biases))


# -- L2Loss, LRN --------------------------------------------------------------------------------
register_op("L2Loss", inputs=["t: T"], outputs=["output: T"], attrs=[f"T: {_FLOATS}"],
            shape_fn=scalar)


def l2_loss(t, name=None):
    """`tf.nn.l2_loss`: sum(t ** 2) / 2, op "L2Loss"."""
    return apply_op("L2Loss", t, name=name)


def _lrn_shape(ctx):
    return TensorShape(list(_with_rank(ctx, 0, 4)))


def _lrn_grad_shape(ctx):
    out = TensorShape(list(_with_rank(ctx, 0, 4)))
    for i in (1, 2):
        try:
            out = out.merge_with(TensorShape(list(_with_rank(ctx, i, 4))))
        except ValueError:
            raise ctx.fail(f"Shapes must be equal, but are {out} and {ctx.input_shape(i)}") \
                from None
    return out


_LRN_ATTRS = ["depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0",
              "beta: float = 0.5", "T: {half, bfloat16, float} = DT_FLOAT"]
register_op("LRN", inputs=["input: T"], outputs=["output: T"], attrs=_LRN_ATTRS,
            shape_fn=_lrn_shape)
register_op("LRNGrad", inputs=["input_grads: T", "input_image: T", "output_image: T"],
            outputs=["output: T"], attrs=_LRN_ATTRS, shape_fn=_lrn_grad_shape)


def lrn(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """`tf.nn.lrn` / `local_response_normalization`: input / (bias + alpha * sqr_sum) ** beta,
    sqr_sum over `depth_radius` channels each side."""
    return apply_op("LRN", input, depth_radius=depth_radius, bias=bias, alpha=alpha, beta=beta,
                    name=name)


local_response_normalization = lrn


# -- top-k --------------------------------------------------------------------------------------
def _top_k_shape(ctx):
    dims = with_rank_at_least(ctx, 0, 1)
    k = ctx.attr("k")
    if k is None and ctx.num_inputs > 1:
        _with_rank(ctx, 1, 0)
        value = ctx.constant_value(1)
        k = None if value is None else int(value)
    if k is not None and k < 0:
        raise ctx.fail(f"Need k >= 0, got {k}")
    if dims is None:
        return [TensorShape(None)] * 2
    last = dims[-1]
    if k is not None and last is not None and last < k:
        raise ctx.fail(f"input must have last dimension >= k = {k} but is {last}")
    shape = TensorShape([*dims[:-1], k])
    return [shape, shape]


register_op("TopKV2", inputs=["input: T", "k: Tk"], outputs=["values: T", "indices: index_type"],
            attrs=["sorted: bool = true", f"T: {_REAL}", "Tk: {int16, int32, int64} = DT_INT32",
                   "index_type: {int16, int32, int64} = DT_INT32"],
            shape_fn=_top_k_shape)
register_op("TopK", inputs=["input: T"], outputs=["values: T", "indices: int32"],
            attrs=["k: int >= 0", "sorted: bool = true", f"T: {_REAL}"], shape_fn=_top_k_shape)


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """`tf.nn.top_k`: (values, indices) of the k largest entries of the last axis, sorted
    descending; of equal values the lower index comes first."""
    values, indices = apply_op("TopKV2", input, k, sorted=sorted, index_type=index_type,
                               name=name)
    return TopKResult(values, indices)


class TopKResult(tuple):
    """The (values, indices) pair of top_k, also readable by name."""

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]


def _in_top_k_shape(ctx):
    pred = _with_rank(ctx, 0, 2)
    targets = _with_rank(ctx, 1, 1)
    if ctx.num_inputs > 2:
        _with_rank(ctx, 2, 0)
    return TensorShape([_merge(ctx, pred[0], targets[0])])


register_op("InTopK", inputs=["predictions: float", "targets: T"], outputs=["precision: bool"],
            attrs=["k: int", "T: {int32, int64} = DT_INT32"], shape_fn=_in_top_k_shape)
register_op("InTopKV2", inputs=["predictions: float", "targets: T", "k: T"],
            outputs=["precision: bool"], attrs=["T: {int32, int64} = DT_INT32"],
            shape_fn=_in_top_k_shape)


def in_top_k(predictions, targets, k, name=None):
    """TF1 `tf.nn.in_top_k`: whether each target's prediction is among the top k of its row
    (ties at the boundary count as in); op "in_top_k/InTopKV2"."""
    with name_scope(name, "in_top_k"):
        targets = convert_to_tensor(targets)
        k = convert_to_tensor(k, dtype=targets.dtype.base_dtype, name="k")
        return apply_op("InTopKV2", predictions, targets, k, name=name)


def crelu(features, name=None, axis=-1):
    """`tf.nn.crelu`: relu(concat([x, -x], axis))."""
    with OpScope(name, "CRelu", [features]) as s:
        features = convert_to_tensor(features, name="features")
        neg = apply_op("Neg", features, name="Neg")
        c = apply_op("ConcatV2", [features, neg], axis, name="concat")
        return s.apply("Relu", c)


__all__ = [
    "relu", "relu6", "elu", "selu", "leaky_relu", "softplus", "softsign", "softmax",
    "log_softmax", "bias_add", "bias_add_v1", "xw_plus_b", "relu_layer", "l2_loss", "lrn",
    "local_response_normalization", "top_k", "in_top_k", "crelu",
]
