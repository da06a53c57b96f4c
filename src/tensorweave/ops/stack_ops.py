"""Stacks (TF's StackV2 family): per-step LIFO storage that while-loop gradients use.

`StackV2` creates an empty stack each time it runs; its `handle` output carries the stack
object (a per-step resource, like a TensorArray), and flows into loop frames through constant
Enters. `StackPushV2` pushes a value (and forwards it); `StackPopV2` pops the most recent one.
`gradients()` pushes every forward value a loop's gradient needs in the forward loop and pops
them, in reverse order, in the gradient loop (`autodiff/control_flow_state.py`).

Op names, inputs and attrs are TF's (`tensorflow/core/ops/data_flow_ops.cc`); all four ops
are stateful, so no pass folds, merges or prunes them apart.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape


def _handle_shape(ctx):
    return TensorShape([2])


def _push_shape(ctx):
    return ctx.input_shape(1)


def _pop_shape(ctx):
    return TensorShape(None)    # the popping code sets the saved value's shape


register_op("StackV2", inputs=["max_size: int32"], outputs=["handle: resource"],
            attrs=["elem_type: type", "stack_name: string = ''"], shape_fn=_handle_shape,
            stateful=True)
register_op("StackPushV2", inputs=["handle: resource", "elem: T"], outputs=["output: T"],
            attrs=["T: type", "swap_memory: bool = false"], shape_fn=_push_shape,
            stateful=True)
register_op("StackPopV2", inputs=["handle: resource"], outputs=["elem: elem_type"],
            attrs=["elem_type: type"], shape_fn=_pop_shape, stateful=True)
register_op("StackCloseV2", inputs=["handle: resource"], stateful=True)


def stack_v2(max_size, elem_type, stack_name="", name=None):
    """A new, empty stack of `elem_type` values (at most `max_size`; -1: unbounded)."""
    max_size = convert_to_tensor(max_size, dtype=dtypes.int32)
    return apply_op("StackV2", max_size, elem_type=dtypes.as_dtype(elem_type).base_dtype,
                    stack_name=stack_name, name=name or "StackV2")


def stack_push_v2(handle, elem, swap_memory=False, name=None):
    """Pushes `elem` onto the stack; returns `elem`."""
    return apply_op("StackPushV2", handle, elem, swap_memory=swap_memory,
                    name=name or "StackPushV2")


def stack_pop_v2(handle, elem_type, name=None):
    """Pops the most recently pushed value (InvalidArgumentError when the stack is empty)."""
    return apply_op("StackPopV2", handle, elem_type=dtypes.as_dtype(elem_type).base_dtype,
                    name=name or "StackPopV2")


def stack_close_v2(handle, name=None):
    """Closes the stack (drops its values); later pushes and pops fail."""
    return apply_op("StackCloseV2", handle, name=name or "StackCloseV2")


__all__: list[str] = []
