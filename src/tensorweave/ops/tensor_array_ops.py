"""TensorArray: a per-step list of tensors that loops write into (TF1's TensorArrayV3 family).

A `TensorArrayV3` op creates the array each time it runs (so each step, or each loop
iteration it sits in, gets a fresh one); its `handle` output carries the array object, and its
`flow` output is a float scalar that orders the reads and writes: every write returns a new
flow, and the Python `TensorArray` object is rebuilt around it (`build_ta_with_new_flow`),
which is how TensorArrays travel through `while_loop` and `cond`.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import scalar
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape, as_shape

# -- schemas ---------------------------------------------------------------------------------


def _handle_and_flow(ctx):
    return [TensorShape([2]), TensorShape([])]


# NOTE: TF keeps the element shape of a TensorArrayV3 as "handle data" on its handle, passed
# on by Enter/Identity/Switch/Merge and TensorArrayGradV3; we find it by walking back.
_HANDLE_FORWARDING = frozenset(["Enter", "RefEnter", "Identity", "RefIdentity", "Switch",
                                "RefSwitch", "Merge", "RefMerge", "TensorArrayGradV3"])


def handle_element_shape(handle):
    """The element shape TF's shape functions know for TensorArray `handle` (the creating
    TensorArrayV3's element_shape attr when fully defined or identical_element_shapes), or
    None when they know nothing."""
    op = handle.op
    while op.type in _HANDLE_FORWARDING:
        op = op.inputs[0].op
    if op.type != "TensorArrayV3":
        return None
    shape = op.get_attr("element_shape")
    shape = TensorShape(None) if shape is None else as_shape(shape)
    if shape.is_fully_defined() or op.get_attr("identical_element_shapes"):
        return shape
    return None


def _read_shape(ctx):
    shape = handle_element_shape(ctx.input_tensor(0))
    return TensorShape(None) if shape is None else shape


def _gather_shape(ctx):
    """[len(indices)] + the handle's element shape; else [?] + the element_shape attr."""
    shape = handle_element_shape(ctx.input_tensor(0))
    if shape is not None:
        n = ctx.input_dims(1)
        return TensorShape([None if n is None or len(n) != 1 else n[0]]).concatenate(shape)
    elem = ctx.attr("element_shape")
    return TensorShape([None]).concatenate(TensorShape(None) if elem is None else elem)


def _concat_shape(ctx):
    return [TensorShape(None), TensorShape([None])]


register_op("TensorArrayV3", inputs=["size: int32"], outputs=["handle: resource", "flow: float"],
            attrs=["dtype: type", "element_shape: shape = { unknown_rank: true }",
                   "dynamic_size: bool = false", "clear_after_read: bool = true",
                   "identical_element_shapes: bool = false", "tensor_array_name: string = ''"],
            shape_fn=_handle_and_flow, stateful=True)
register_op("TensorArrayGradV3", inputs=["handle: resource", "flow_in: float"],
            outputs=["grad_handle: resource", "flow_out: float"], attrs=["source: string"],
            shape_fn=_handle_and_flow, stateful=True)
register_op("TensorArrayWriteV3",
            inputs=["handle: resource", "index: int32", "value: T", "flow_in: float"],
            outputs=["flow_out: float"], attrs=["T: type"], shape_fn=scalar)
register_op("TensorArrayReadV3", inputs=["handle: resource", "index: int32", "flow_in: float"],
            outputs=["value: dtype"], attrs=["dtype: type"], shape_fn=_read_shape)
register_op("TensorArrayGatherV3",
            inputs=["handle: resource", "indices: int32", "flow_in: float"],
            outputs=["value: dtype"],
            attrs=["dtype: type", "element_shape: shape = { unknown_rank: true }"],
            shape_fn=_gather_shape)
register_op("TensorArrayScatterV3",
            inputs=["handle: resource", "indices: int32", "value: T", "flow_in: float"],
            outputs=["flow_out: float"], attrs=["T: type"], shape_fn=scalar)
register_op("TensorArrayConcatV3", inputs=["handle: resource", "flow_in: float"],
            outputs=["value: dtype", "lengths: int64"],
            attrs=["dtype: type", "element_shape_except0: shape = { unknown_rank: true }"],
            shape_fn=_concat_shape)
register_op("TensorArraySplitV3",
            inputs=["handle: resource", "value: T", "lengths: int64", "flow_in: float"],
            outputs=["flow_out: float"], attrs=["T: type"], shape_fn=scalar)
register_op("TensorArraySizeV3", inputs=["handle: resource", "flow_in: float"],
            outputs=["size: int32"], shape_fn=scalar)
register_op("TensorArrayCloseV3", inputs=["handle: resource"])


# -- the Python object -----------------------------------------------------------------------


class TensorArray:
    """TF1's `tf.TensorArray` (graph mode): a handle, a flow, and what is known statically.

    Methods that write return a new TensorArray (same handle, new flow); use the returned
    object, as in TensorFlow.
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._size = size
        # NOTE: a one-element list shared by every TensorArray on this handle (TF's trick).
        self._element_shape = [TensorShape(None) if element_shape is None
                               else as_shape(element_shape)]
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            if size is not None or tensor_array_name is not None:
                raise ValueError("Cannot provide both a handle and size/tensor_array_name "
                                 "at the same time")
            self._handle, self._flow = handle, flow
            return
        if flow is not None:
            raise ValueError("flow must be None if handle is None.")
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        with name_scope(name, "TensorArray", [size]) as scope:
            self._handle, self._flow = apply_op(
                "TensorArrayV3", size, dtype=self._dtype,
                element_shape=TensorShape(None) if element_shape is None else element_shape,
                identical_element_shapes=bool(infer_shape), dynamic_size=self._dynamic_size,
                clear_after_read=True if clear_after_read is None else bool(clear_after_read),
                tensor_array_name=tensor_array_name or "", name=scope)

    @property
    def flow(self):
        """The flow tensor: orders this array's reads and writes."""
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        return self._handle

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    def _check_element_shape(self, shape: TensorShape) -> None:
        """Checks `shape` against the element shape; merges it in with infer_shape (TF's)."""
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected "
                             f"{self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _value(self, value):
        value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
        if value.dtype.base_dtype != self._dtype:
            raise TypeError(f"TensorArray dtype is {self._dtype.name} but Op is trying to "
                            f"write dtype {value.dtype.base_dtype.name}")
        return value

    # -- reads ---------------------------------------------------------------------------------
    def read(self, index, name=None):
        """The element at `index` (cleared afterwards unless clear_after_read=False)."""
        value = apply_op("TensorArrayReadV3", self._handle, index, self._flow,
                         dtype=self._dtype, name=name)
        value.set_shape(self.element_shape)
        return value

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        value = apply_op("TensorArrayGatherV3", self._handle, indices, self._flow,
                         dtype=self._dtype, element_shape=self.element_shape, name=name)
        value.set_shape(TensorShape([None]).concatenate(self.element_shape))
        return value

    def stack(self, name=None):
        """All elements, stacked along a new first dimension."""
        with name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(_range(self.size()))
            n = _static_int(self._size)
            if not self._dynamic_size and n is not None and self.element_shape.ndims is not None:
                value.set_shape(TensorShape([n]).concatenate(self.element_shape))
            return value

    def concat(self, name=None):
        """All elements concatenated along their first dimension."""
        elem = self.element_shape
        except0 = elem[1:] if elem.ndims else TensorShape(None)
        value, _ = apply_op("TensorArrayConcatV3", self._handle, self._flow,
                            dtype=self._dtype, element_shape_except0=except0, name=name)
        if elem.ndims:
            dim0 = None
            size = _static_int(self.size()) if self._infer_shape else None
            if size is not None and elem[0].value is not None:
                dim0 = size * elem[0].value
            value.set_shape(TensorShape([dim0]).concatenate(elem[1:]))
        return value

    def size(self, name=None):
        """The number of elements (a constant unless dynamically sized)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        return apply_op("TensorArraySizeV3", self._handle, self._flow, name=name)

    # -- writes --------------------------------------------------------------------------------
    def write(self, index, value, name=None):
        """Writes `value` at `index`; returns the TensorArray with the new flow."""
        with name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = self._value(value)
            self._check_element_shape(value.shape)
            flow = apply_op("TensorArrayWriteV3", self._handle, index, value, self._flow,
                            name=name)
            return build_ta_with_new_flow(self, flow)

    def scatter(self, indices, value, name=None):
        """Writes `value[k]` at `indices[k]`."""
        with name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = self._value(value)
            self._check_element_shape(value.shape[1:] if value.shape.ndims else
                                      TensorShape(None))
            flow = apply_op("TensorArrayScatterV3", self._handle, indices, value, self._flow,
                            name=name)
            return build_ta_with_new_flow(self, flow)

    def unstack(self, value, name=None):
        """Writes the slices of `value` along its first dimension."""
        with name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = self._value(value)
            return self.scatter(_range(_leading_dim(value)), value)

    def split(self, value, lengths, name=None):
        """Writes consecutive pieces of `value` of the given `lengths`."""
        with name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = self._value(value)
            lengths = _as_int64(lengths)
            self._check_split_shape(value, lengths)
            flow = apply_op("TensorArraySplitV3", self._handle, value, lengths, self._flow,
                            name=name)
            return build_ta_with_new_flow(self, flow)

    def _check_split_shape(self, value, lengths) -> None:
        """Equal constant lengths give every element the same, known leading dimension."""
        from tensorweave.ops.shape_inference import constant_value

        known = constant_value(lengths)
        if value.shape.ndims is None or known is None or np.size(known) == 0:
            return
        if np.ndim(known) and known.max() == known.min():
            self._check_element_shape(TensorShape([int(known[0])]).concatenate(value.shape[1:]))

    def close(self, name=None):
        return apply_op("TensorArrayCloseV3", self._handle, name=name)

    def grad(self, source, flow=None, name=None):
        """The gradient TensorArray for `source` (writes to it accumulate)."""
        from tensorweave.ops.control_flow_ops import _identity

        flow = self._flow if flow is None else flow
        graph = self._handle.graph
        with name_scope(name, "TensorArrayGrad", [self._handle]), \
                graph.colocate_with(self._handle.op):
            g_handle, _ = apply_op("TensorArrayGradV3", self._handle, flow, source=source)
            with graph.control_dependencies([g_handle]):
                flow = _identity(flow, name="gradient_flow")
            g = TensorArray(self._dtype, handle=g_handle, flow=flow,
                            infer_shape=self._infer_shape)
            g._element_shape = self._element_shape
            return g


def build_ta_with_new_flow(old: TensorArray, flow) -> TensorArray:
    """A TensorArray on `old`'s handle with `flow` (shares the element shape)."""
    ta = TensorArray(old.dtype, handle=old.handle, flow=flow, infer_shape=old._infer_shape)
    ta._dynamic_size = old._dynamic_size
    ta._size = old._size
    ta._element_shape = old._element_shape
    return ta


def _static_int(value):
    if isinstance(value, (int, np.integer)):
        return int(value)
    from tensorweave.ops.shape_inference import constant_value

    v = constant_value(value) if hasattr(value, "op") else None
    return int(v) if v is not None and np.ndim(v) == 0 else None


def _range(n):
    """int32 indices 0..n-1 (TF's `math_ops.range(0, n)`: a Range op, which shape functions
    see through when `n` is known)."""
    from tensorweave.ops import creation_ops

    return creation_ops.range(0, n)


def _leading_dim(value):
    """TF's `array_ops.shape(value)[0]`."""
    if value.shape.ndims == 0:
        raise ValueError(f"Cannot unstack a scalar: {value}")
    from tensorweave.ops import array_ops, slicing_ops  # noqa: F401 - Tensor.__getitem__

    return array_ops.shape(value)[0]


def _as_int64(lengths):
    """TF's `math_ops.cast(lengths, int64)` (a Cast op unless already int64)."""
    from tensorweave.ops import math_ops

    return math_ops.cast(lengths, dtypes.int64)


__all__ = ["TensorArray"]
