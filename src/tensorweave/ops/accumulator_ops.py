"""Conditional accumulators: TF's op registrations and TF1's `tf.ConditionalAccumulator` and
`tf.SparseConditionalAccumulator` classes.

An accumulator aggregates the gradients of one global step: `apply_grad(grad, local_step)`
drops a gradient computed before the accumulator's global step and adds the others;
`take_grad(n)` blocks until `n` gradients arrived, returns their mean (or sum) and starts the
next step; `set_global_step` moves the step. The runtime state and the blocking contract are
in `runtime/kernels/cpu/accumulators.py`.

The TF1 ops take the accumulator as `handle: Ref(string)`; the `Resource*` ops (TF 2's) take
a `resource` handle and run on the same kernels, so GraphDefs of either kind run.

    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    apply = acc.apply_grad(grad, local_step=step)
    avg = acc.take_grad(2)   # blocks until two fresh gradients arrived
"""

from __future__ import annotations

from tensorweave import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator",
           "SparseConditionalAccumulator"]

OP_TYPES: list[str] = []   # every op type this module registers (for the test harness)

_ACC_ATTRS = ["dtype: numbertype", "shape: shape", "container: string = ''",
              "shared_name: string = ''", "reduction_type: {'MEAN', 'SUM'} = 'MEAN'"]


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, **kw)


def _check_rank0(ctx, i: int) -> None:
    """TF's `WithRank(input(i), 0)`."""
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) != 0:
        raise ctx.fail(f"Shape must be rank 0 but is rank {len(dims)}")


def _take_shape(ctx):
    _check_rank0(ctx, 1)     # num_required; the average's shape is the accumulator's
    return [None]


def _sparse_take_shape(ctx):
    _check_rank0(ctx, 1)
    return [TensorShape([None]), None, TensorShape([None])]


def _accumulator_ops(prefix: str, handle: str, handle_shape) -> None:
    """The dense family: `{prefix}ConditionalAccumulator`, `{prefix}Accumulator*`."""
    _register(f"{prefix}ConditionalAccumulator", outputs=[f"handle: {handle}"],
              attrs=_ACC_ATTRS, stateful=True, shape_fn=lambda ctx: TensorShape(handle_shape))
    h = f"handle: {handle}"
    _register(f"{prefix}AccumulatorNumAccumulated", inputs=[h],
              outputs=["num_accumulated: int32"], stateful=True,
              shape_fn=lambda ctx: TensorShape([]))
    _register(f"{prefix}AccumulatorSetGlobalStep", inputs=[h, "new_global_step: int64"],
              stateful=True)
    _register(f"{prefix}AccumulatorApplyGradient",
              inputs=[h, "local_step: int64", "gradient: dtype"], attrs=["dtype: numbertype"],
              stateful=True)
    _register(f"{prefix}AccumulatorTakeGradient", inputs=[h, "num_required: int32"],
              outputs=["average: dtype"], attrs=["dtype: numbertype"], stateful=True,
              shape_fn=_take_shape)


_accumulator_ops("", "Ref(string)", [2])
_accumulator_ops("Resource", "resource", [])
_register("SparseConditionalAccumulator", outputs=["handle: Ref(string)"], attrs=_ACC_ATTRS,
          stateful=True, shape_fn=lambda ctx: TensorShape([2]))
_register("SparseAccumulatorApplyGradient",
          inputs=["handle: Ref(string)", "local_step: int64", "gradient_indices: int64",
                  "gradient_values: dtype", "gradient_shape: int64"],
          attrs=["dtype: numbertype", "has_known_shape: bool"], stateful=True)
_register("SparseAccumulatorTakeGradient", inputs=["handle: Ref(string)", "num_required: int32"],
          outputs=["indices: int64", "values: dtype", "shape: int64"],
          attrs=["dtype: numbertype"], stateful=True, shape_fn=_sparse_take_shape)


# -- the Python classes ------------------------------------------------------------------------
def _as_int64(value):
    from tensorweave.ops.math_ops import cast

    return cast(convert_to_tensor(value), _dtypes.int64)


def _on_handle(handle, op_type: str, *inputs, name=None, **attrs):
    """`op_type` on the accumulator `handle`, colocated with it as TF1 colocates an op with
    its ref inputs. Every input must already be a Tensor (TF converts before colocating)."""
    with handle.graph.colocate_with(handle.op):
        return apply_op(op_type, handle, *inputs, name=name, **attrs)


def _take(handle, op_type: str, num_required, dtype, name):
    """A take op; a literal `num_required` becomes `<op name>/num_required`, not colocated."""
    with name_scope(name, op_type, [handle]) as scope:
        n = convert_to_tensor(num_required, _dtypes.int32, name="num_required")
        return _on_handle(handle, op_type, n, dtype=dtype, name=scope)


def _check_scalar(t, what: str, op_name: str) -> None:
    rank = t.get_shape().ndims
    if rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {rank} for '{op_name}' "
                         f"({what})")


class ConditionalAccumulatorBase:
    """What both accumulators offer: the handle, `num_accumulated`, `set_global_step`."""

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = TensorShape(shape) if shape is not None else TensorShape(None)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        """The accumulator's handle (a `Ref(string)` tensor)."""
        return self._accumulator_ref

    @property
    def name(self) -> str:
        """The accumulator op's name, without its scope."""
        return self._name

    @property
    def dtype(self):
        """The dtype of the accumulated gradients."""
        return self._dtype

    def num_accumulated(self, name=None):
        """An int32 scalar: the number of gradients accumulated for the current step."""
        if name is None:
            name = f"{self._name}_NumAccumulated"
        return _on_handle(self._accumulator_ref, "AccumulatorNumAccumulated", name=name)

    def set_global_step(self, new_global_step, name=None):
        """The op setting the accumulator's global step (a smaller one logs a warning)."""
        step = _as_int64(new_global_step)
        _check_scalar(step, "new_global_step", name or "AccumulatorSetGlobalStep")
        return _on_handle(self._accumulator_ref, "AccumulatorSetGlobalStep", step, name=name)


def _accumulator_op(op_type: str, dtype, shape, shared_name, name, reduction_type):
    return apply_op(op_type, dtype=_dtypes.as_dtype(dtype),
                    shape=TensorShape(shape) if shape is not None else TensorShape(None),
                    shared_name=shared_name or "", name=name, reduction_type=reduction_type)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """TF1's `tf.ConditionalAccumulator`: averages the fresh dense gradients of a step.

    Args:
      dtype: the gradients' dtype.
      shape: the gradients' (partial) shape; None: any.
      shared_name: when set, the accumulator is shared under this name by every session (and
        every graph) of the device.
      name: the op's name.
      reduction_type: "MEAN" (default) or "SUM".
    """

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        ref = _accumulator_op("ConditionalAccumulator", dtype, shape, shared_name, name,
                              reduction_type)
        super().__init__(_dtypes.as_dtype(dtype), shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """The op adding `grad` unless `local_step` is older than the accumulator's step.

        Raises:
          ValueError: `grad`'s shape is incompatible with the accumulator's.
        """
        grad = convert_to_tensor(grad, self._dtype)
        grad.get_shape().assert_is_compatible_with(self._shape)
        local_step = _as_int64(local_step)
        _check_scalar(local_step, "local_step", name or "AccumulatorApplyGradient")
        return _on_handle(self._accumulator_ref, "AccumulatorApplyGradient", local_step, grad,
                          name=name)

    def take_grad(self, num_required, name=None):
        """The mean of `num_required` (or more) fresh gradients; blocks until they arrived,
        then empties the accumulator and advances its global step."""
        out = _take(self._accumulator_ref, "AccumulatorTakeGradient", num_required,
                    self._dtype, name)
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """TF1's `tf.SparseConditionalAccumulator`: averages IndexedSlices gradients per index
    (each index's sum divided by the number of gradients holding it)."""

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        ref = _accumulator_op("SparseConditionalAccumulator", dtype, shape, shared_name, name,
                              reduction_type)
        super().__init__(_dtypes.as_dtype(dtype), shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """`apply_grad` of an IndexedSlices."""
        return self.apply_grad(grad_indices=grad.indices, grad_values=grad.values,
                               grad_shape=grad.dense_shape, local_step=local_step, name=name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """The op adding the slices (`grad_shape`: their dense shape, or None) unless stale."""
        from tensorweave.ops.math_ops import cast

        local_step = _as_int64(local_step)
        indices = cast(grad_indices, _dtypes.int64)
        values = convert_to_tensor(grad_values)
        shape = cast([] if grad_shape is None else grad_shape, _dtypes.int64)
        return _on_handle(self._accumulator_ref, "SparseAccumulatorApplyGradient", local_step,
                          indices, values, shape, has_known_shape=grad_shape is not None,
                          name=name)

    def take_grad(self, num_required, name=None):
        """(indices, values, shape) of the per-index mean; blocks like `take_grad`."""
        return _take(self._accumulator_ref, "SparseAccumulatorTakeGradient", num_required,
                     self._dtype, name)

    def take_indexed_slices_grad(self, num_required, name=None):
        """`take_grad` as an IndexedSlices."""
        from tensorweave.ops.indexed_slices import IndexedSlices

        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(indices=indices, values=values, dense_shape=shape)
