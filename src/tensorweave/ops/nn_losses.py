"""Loss ops: SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, and the
`tf.nn` cross-entropy wrappers (softmax, sparse softmax, sigmoid, weighted, log-Poisson).

The composite losses use TF's numerically stable formulas; they are built from math ops
through the Tensor operators and `apply_op`, so their graphs look like TF's.
"""

from __future__ import annotations

import math

from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import broadcast_binary
from tensorweave.ops.op_scope import OpScope
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_FLOATS = "{half, bfloat16, float, double}"


# -- ops ----------------------------------------------------------------------------------------
def _xent_shape(ctx):
    """Rank-2 features and labels, equal or broadcastable (TF >= 1.14)."""
    f, lab = ctx.input_shape(0), ctx.input_shape(1)
    try:
        merged = f.with_rank(2).merge_with(lab)
    except ValueError:
        merged = broadcast_binary(ctx)
        if merged.ndims is not None and merged.ndims != 2:
            raise ctx.fail(f"Shape must be rank 2 but is rank {merged.ndims}") from None
    dims = merged.as_tuple() or (None, None)
    return [TensorShape([dims[0]]), TensorShape(list(dims))]


def _sparse_xent_shape(ctx):
    f, lab = ctx.input_dims(0), ctx.input_dims(1)
    if f is not None and len(f) != 2:
        raise ctx.fail(f"Shape must be rank 2 but is rank {len(f)}")
    if lab is not None and len(lab) != 1:
        raise ctx.fail(f"Shape must be rank 1 but is rank {len(lab)}")
    f = f or (None, None)
    batch, other = f[0], (lab or (None,))[0]
    if batch is not None and other is not None and batch != other:
        raise ctx.fail(f"Dimensions must be equal, but are {batch} and {other}")
    batch = batch if batch is not None else other
    return [TensorShape([batch]), TensorShape([batch, f[1]])]


register_op("SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
            outputs=["loss: T", "backprop: T"], attrs=[f"T: {_FLOATS}"], shape_fn=_xent_shape)
register_op("SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
            outputs=["loss: T", "backprop: T"],
            attrs=[f"T: {_FLOATS}", "Tlabels: {int32, int64} = DT_INT64"],
            shape_fn=_sparse_xent_shape)


# -- softmax cross entropy ----------------------------------------------------------------------
def _ensure_xent_args(name, labels, logits) -> None:
    if labels is None or logits is None:
        raise ValueError(f"Both `labels` and `logits` must be provided for {name}"
                         f"Received: labels={labels} and logits={logits}")


def _move_axis_to_end(t, axis: int, rank: int):
    perm = [i for i in range(rank) if i != axis] + [axis]
    return apply_op("Transpose", t, perm, name="transpose")


def _flatten_outer(t, depth):
    """Reshape to [-1, depth] (TF's _flatten_outer_dims) with a static shape when known."""
    return apply_op("Reshape", t, [-1, depth if depth is not None else -1], name="Reshape")


def _leading_shape(logits, rank: int):
    """The logits shape without its last dim: a constant when known, else Shape+Slice."""
    dims = logits.shape.as_tuple()
    if dims is not None and None not in dims[:-1]:
        return list(dims[:-1])
    shape = apply_op("Shape", logits, name="Shape")
    return apply_op("Slice", shape, [0], [rank - 1], name="Slice")


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """TF1 `tf.nn.softmax_cross_entropy_with_logits_v2`: -sum(labels * log_softmax(logits))
    over `axis`; the SoftmaxCrossEntropyWithLogits op is named
    "softmax_cross_entropy_with_logits". Gradients flow into labels too.

    Raises:
      ValueError: logits of unknown rank with rank != 2 handling needed.
    """
    axis = dim if axis is None else axis
    axis = -1 if axis is None else axis
    with OpScope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as s:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype.base_dtype != logits.dtype.base_dtype:
            labels = apply_op("Cast", labels, DstT=logits.dtype.base_dtype, name="Cast")
        rank = logits.shape.ndims
        if rank is None:
            raise ValueError("softmax_cross_entropy_with_logits needs logits of known rank")
        if axis % rank != rank - 1:
            logits = _move_axis_to_end(logits, axis % rank, rank)
            labels = _move_axis_to_end(labels, axis % rank, rank)
        if rank == 2:
            return s.apply("SoftmaxCrossEntropyWithLogits", logits, labels)[0]
        depth = logits.shape.as_tuple()[-1]
        out_shape = _leading_shape(logits, rank)
        cost, _ = s.apply("SoftmaxCrossEntropyWithLogits", _flatten_outer(logits, depth),
                          _flatten_outer(labels, depth))
        return apply_op("Reshape", cost, out_shape, name="Reshape_2")


def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1, name=None, axis=None):
    """TF1 `tf.nn.softmax_cross_entropy_with_logits` (deprecated): as _v2, with no gradient
    into labels (a StopGradient named "labels_stop_gradient")."""
    dim = axis if axis is not None else dim
    _ensure_xent_args("softmax_cross_entropy_with_logits", labels, logits)
    with OpScope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as s:
        labels = apply_op("StopGradient", labels, name="labels_stop_gradient")
        return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim,
                                                    name=s.name)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """TF1 `tf.nn.sparse_softmax_cross_entropy_with_logits`: -log_softmax(logits)[label],
    one label index per row. Out-of-range labels fail at run time (InvalidArgumentError).

    Raises:
      ValueError: logits is a scalar, or labels' shape is not logits' shape minus the last dim.
    """
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", labels, logits)
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        lshape, fshape = labels.shape, logits.shape
        _check_sparse_shapes(lshape, fshape)
        if fshape.ndims == 2:
            return apply_op("SparseSoftmaxCrossEntropyWithLogits", logits, labels, name=name)[0]
        depth = fshape.as_tuple()[-1] if fshape.ndims is not None else None
        flat_logits = _flatten_outer(logits, depth)
        flat_labels = apply_op("Reshape", labels, [-1], name="Reshape_1")
        cost, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", flat_logits, flat_labels,
                           name=name)
        out_shape = lshape.as_list() if lshape.is_fully_defined() else \
            apply_op("Shape", labels, name="Shape")
        cost = apply_op("Reshape", cost, out_shape, name="Reshape_2")
        cost.set_shape(lshape)
        return cost


def _check_sparse_shapes(lshape, fshape) -> None:
    if fshape.ndims == 0:
        raise ValueError(f"`logits` cannot be a scalar. Received logits={fshape}`")
    if fshape.ndims is not None and lshape.ndims is not None and \
            lshape.ndims != fshape.ndims - 1:
        raise ValueError(f"`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: "
                         f"labels.shape={lshape} of rank {lshape.ndims} and "
                         f"logits.shape={fshape} of rank {fshape.ndims}")
    if fshape.ndims is not None and lshape.is_fully_defined() and \
            TensorShape(fshape.as_tuple()[:-1]).is_fully_defined() and \
            lshape.as_tuple() != fshape.as_tuple()[:-1]:
        raise ValueError(f"`labels.shape` must equal `logits.shape` except for the last "
                         f"dimension. Received: labels.shape={lshape} and logits.shape={fshape}")


# -- sigmoid / weighted / Poisson ---------------------------------------------------------------
def _same_shape(logits, labels, what: str = "`logits` and `labels`") -> None:
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"{what} must have the same shape, received ({logits.shape} vs "
                         f"{labels.shape}).")


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """TF1 `tf.nn.sigmoid_cross_entropy_with_logits`, in TF's stable form
    max(x, 0) - x * z + log(1 + exp(-|x|)); the last op is named "logistic_loss".

    Raises:
      ValueError: labels and logits of different shapes.
    """
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", labels, logits)
    with OpScope(name, "logistic_loss", [logits, labels]) as s:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _same_shape(logits, labels)
        zeros = apply_op("ZerosLike", logits, name="zeros_like")
        cond = apply_op("GreaterEqual", logits, zeros, name="GreaterEqual")
        relu_logits = apply_op("Select", cond, logits, zeros, name="Select")
        neg_abs = apply_op("Select", cond, apply_op("Neg", logits, name="Neg"), logits,
                           name="Select")
        return s.apply("AddV2", relu_logits - logits * labels,
                       apply_op("Log1p", apply_op("Exp", neg_abs, name="Exp"), name="Log1p"))


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """TF1 `tf.nn.weighted_cross_entropy_with_logits`: sigmoid cross entropy with positives
    weighted by `pos_weight`, as (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) +
    max(-x, 0))."""
    labels = targets if labels is None else labels
    with OpScope(name, "logistic_loss", [logits, labels]) as s:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _same_shape(logits, labels)
        log_weight = 1 + (pos_weight - 1) * labels
        neg_abs = -apply_op("Abs", logits, name="Abs")
        softplus_part = apply_op("Log1p", apply_op("Exp", neg_abs, name="Exp"), name="Log1p") \
            + apply_op("Relu", -logits, name="Relu")
        return s.apply("AddV2", (1 - labels) * logits, log_weight * softplus_part)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """`tf.nn.log_poisson_loss`: exp(log_input) - log_input * targets, plus the Stirling
    term targets * log(targets) - targets + 0.5 * log(2 pi targets) (for targets > 1) when
    `compute_full_loss`.

    Raises:
      ValueError: targets and log_input of different shapes.
    """
    with name_scope(name, "log_poisson_loss", [log_input, targets]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        _same_shape(log_input, targets, "`log_input` and `targets`")
        result = apply_op("Exp", log_input, name="Exp") - log_input * targets
        if compute_full_loss:
            dt = targets.dtype.base_dtype
            log = apply_op("Log", targets, name="Log")
            stirling = targets * log - targets + _const(0.5, dt) * apply_op(
                "Log", _const(2 * math.pi, dt) * targets, name="Log")
            zeros = apply_op("ZerosLike", targets, name="zeros_like")
            ones = apply_op("OnesLike", targets, name="ones_like")
            cond = apply_op("LogicalAnd", apply_op("GreaterEqual", targets, zeros),
                            apply_op("LessEqual", targets, ones), name="LogicalAnd")
            result = result + apply_op("Select", cond, zeros, stirling, name="Select")
        return result


def _const(value, dtype):
    from tensorweave.ops.constant_op import constant

    return constant(value, dtype=dtype)


__all__ = [
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits", "log_poisson_loss",
]
