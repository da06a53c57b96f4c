"""Gradients of the TensorArray ops (TF1's tensor_array_grad.py).

Each forward TensorArray gets one gradient TensorArray per `gradients()` call (a
`TensorArrayGradV3` keyed by the call's name scope, the "source"): repeated writes to an index
of a gradient array add up. Reads and writes swap roles backward:

    forward                              backward
    read(i)   / gather(idx) / concat     write(i, g) / scatter(idx, g) / split(g, lengths)
    write(i, v) / scatter / split        read(i) / gather(idx) / concat  -> gradient of v

A read's gradient is the flow of the write into the gradient array, so the flow gradients
order every write into the gradient array before the reads that the forward writes'
gradients do. Inside a while loop the flow is a loop variable (or a loop invariant), and its
gradient travels through the gradient loop like any other; the forward handle enters the
gradient loop as an invariant, the forward index and flow are saved per iteration.
(TensorArrayV3, GradV3, SizeV3 and CloseV3 are declared not differentiable in state_grad.py.)
"""

from __future__ import annotations

from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops.apply import apply_op
from tensorweave.ops.tensor_array_ops import TensorArray


def grad_source(t) -> str:
    """The name scope of the `gradients()` call that built `t` (e.g. "gradients_1", or
    "outer/gradients"): which gradient TensorArray of a forward array to use.

    Raises:
      ValueError: no name component of `t` starts with "gradients".
    """
    tokens = t.name.split("/")
    pos = [i for i, tok in enumerate(tokens) if tok.startswith("gradients")]
    if not pos:
        raise ValueError(
            "Expected op/tensor name to start with gradients (excluding scope), got: "
            f"{t.name}. This means that a tf.gradients op with this op in its dependency path "
            "has a custom name that does not start with 'gradients'. Please make sure all "
            "calls to tf.gradients that have non-empty `name` arguments use names that start "
            "with 'gradients'.")
    return "/".join(tokens[:pos[-1] + 1])


def _grad_array(op, dtype, source: str, flow) -> TensorArray:
    """The gradient TensorArray (for `source`) of the forward array `op` reads or writes."""
    forward = TensorArray(dtype=dtype, handle=op.inputs[0], flow=flow,
                          colocate_with_first_write_call=False)
    return forward.grad(source=source, flow=flow)


def _after_forward_write(op, flow):
    """`flow` (a gradient flow) behind the forward write's own output flow, so that the
    gradient array is looked up only after the write ran (TF's "write_barrier")."""
    flow_out = apply_op("Identity", op.outputs[0], name="flow_out")
    with op.graph.control_dependencies([flow_out]):
        return apply_op("Identity", flow, name="write_barrier")


@RegisterGradient("TensorArrayReadV3")
def _read_grad(op, grad):
    """Writes `grad` at the index into the gradient array; returns its flow (for flow_in).
    An IndexedSlices `grad` is made dense by the write, as in TF."""
    index, flow = op.inputs[1], op.inputs[2]
    g = _grad_array(op, op.get_attr("dtype"), grad_source(grad), flow)
    return [None, None, g.write(index, grad).flow]


@RegisterGradient("TensorArrayWriteV3")
def _write_grad(op, flow):
    """Reads the value's gradient at the index from the gradient array."""
    flow = _after_forward_write(op, flow)
    g = _grad_array(op, op.get_attr("T"), grad_source(flow), flow)
    return [None, None, g.read(op.inputs[1]), flow]


@RegisterGradient("TensorArrayGatherV3")
def _gather_grad(op, grad):
    """Scatters `grad` to the gathered indices of the gradient array."""
    indices, flow = op.inputs[1], op.inputs[2]
    g = _grad_array(op, op.get_attr("dtype"), grad_source(grad), flow)
    return [None, None, g.scatter(indices, grad).flow]


@RegisterGradient("TensorArrayScatterV3")
def _scatter_grad(op, flow):
    """Gathers the values' gradients at the scattered indices of the gradient array."""
    flow = _after_forward_write(op, flow)
    g = _grad_array(op, op.get_attr("T"), grad_source(flow), flow)
    return [None, None, g.gather(op.inputs[1]), flow]


@RegisterGradient("TensorArrayConcatV3")
def _concat_grad(op, grad, unused_lengths_grad):
    """Splits `grad` into the gradient array along the forward elements' lengths."""
    flow, lengths = op.inputs[1], op.outputs[1]
    g = _grad_array(op, op.get_attr("dtype"), grad_source(grad), flow)
    return [None, g.split(grad, lengths=lengths).flow]


@RegisterGradient("TensorArraySplitV3")
def _split_grad(op, flow):
    """Concatenates the pieces' gradients from the gradient array."""
    flow = _after_forward_write(op, flow)
    g = _grad_array(op, op.get_attr("T"), grad_source(flow), flow)
    return [None, g.concat(), None, flow]


__all__: list[str] = []
