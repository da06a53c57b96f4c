"""CPU kernels of the TensorArrayV3 family.

`TensorArrayV3` returns a fresh `TensorArrayState` as its handle value each time it runs: the
array lives as long as the step holds a reference to it (a per-step resource), flowing through
Enter/Switch/Merge like any value. The flow outputs are float32 zeros that only order ops.
Arrays are not shared between threads (the dataflow executor runs a step on one thread).
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

_FLOW = np.float32(0.0)


def _err(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


def _shape_str(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


class TensorArrayState:
    """The runtime array: elements, which were written/read, and the known element shape.

    A gradient array (`new_grad`, TF's TensorArrayGradV3) has a fixed size, sums repeated
    writes to an index (`aggregate`), and reads an unwritten index as zeros shaped like the
    forward array's element there (`shapes`, copied when the gradient array is made).
    """

    def __init__(self, name: str, dtype, size: int, dynamic: bool, clear_after_read: bool,
                 identical_shapes: bool, element_shape, aggregate: bool = False):
        self.name = name
        self.dtype = dtype
        self.dynamic = dynamic
        self.clear_after_read = clear_after_read
        self.identical_shapes = identical_shapes
        self.element_shape = element_shape      # tuple with None for unknown dims, or None
        self.aggregate = aggregate              # gradient arrays sum repeated writes
        self.values: list = [None] * size
        self.cleared = [False] * size
        self.shapes: list = [None] * size       # each written element's shape (kept on clear)
        self.closed = False
        self.grads: dict[str, TensorArrayState] = {}

    def __repr__(self) -> str:
        return f"<TensorArray {self.name} size={len(self.values)} dtype={self.dtype.name}>"

    def size(self) -> int:
        return len(self.values)

    def _check_open(self) -> None:
        if self.closed:
            raise _err(f"TensorArray {self.name} has already been closed.")

    def write(self, index: int, value) -> None:
        self._check_open()
        n = len(self.values)
        if index < 0 or (index >= n and not self.dynamic):
            raise _err(f"Tried to write to index {index} but array is not resizeable and "
                       f"size is: {n}")
        if index >= n:
            grow = index + 1 - n
            self.values.extend([None] * grow)
            self.cleared.extend([False] * grow)
            self.shapes.extend([None] * grow)
        value = np.asarray(value)
        self._check_shape(index, value.shape)
        if self.cleared[index]:
            raise _err(f"Could not write to TensorArray index {index} because it has already "
                       "been read.")
        old = self.values[index]
        if old is not None:
            if not self.aggregate:
                raise _err(f"Could not write to TensorArray index {index} because it has "
                           "already been written to.")
            if old.shape != value.shape:
                raise _err(f"Could not aggregate to TensorArray index {index} because the "
                           f"existing shape is {_shape_str(old.shape)} but the new input shape "
                           f"is {_shape_str(value.shape)}.")
            value = old + value
        self.values[index] = value
        self.shapes[index] = value.shape

    def _check_shape(self, index: int, shape) -> None:
        known = self.element_shape
        if known is not None:
            if len(known) != len(shape) or any(k is not None and k != d
                                               for k, d in zip(known, shape)):
                raise _err(
                    f"Could not write to TensorArray index {index} because the value shape is "
                    f"{_shape_str(shape)} which is incompatible with the TensorArray's inferred "
                    f"element shape: {_shape_str(known)} (consider setting infer_shape=False).")
            if None in known and self.identical_shapes:
                self.element_shape = tuple(shape)
        elif self.identical_shapes:
            self.element_shape = tuple(shape)

    def read(self, index: int):
        self._check_open()
        n = len(self.values)
        if index < 0 or (index >= n and not self.aggregate):
            raise _err(f"Tried to read from index {index} but array size is: {n}")
        if index < n and self.cleared[index]:
            raise _err(f"Could not read index {index} twice because it was cleared after a "
                       "previous read (perhaps try setting clear_after_read = false?)")
        value = self.values[index] if index < n else None
        if value is None:
            value = self._zeros(index)
        if self.clear_after_read and not self.aggregate:
            self.values[index] = None
            self.cleared[index] = True
        return value

    def _zeros(self, index: int):
        """An unwritten element: zeros of its recorded shape (gradient arrays) or of the
        element shape when fully known."""
        shape = self.shapes[index] if self.aggregate and index < len(self.shapes) else None
        if shape is None:
            shape = self.element_shape
        if shape is None or None in shape:
            raise _err(f"TensorArray {self.name}: Could not read from TensorArray index "
                       f"{index} because it has not yet been written to. Furthermore, the "
                       f"element shape is not fully defined: {_shape_str(shape)}. If you set "
                       "the full element_shape property on the forward TensorArray, the "
                       "proper all-zeros tensor will be returned instead of incurring this "
                       "error.")
        return np.zeros(shape, dtype=self.dtype.np_dtype)

    def new_grad(self, source: str) -> TensorArrayState:
        """The gradient array for `source` (made on first use, then the same one). Its size is
        this array's size now, which is frozen from then on (no more dynamic growth)."""
        g = self.grads.get(source)
        if g is None:
            self._check_open()
            self.dynamic = False
            g = self.grads[source] = TensorArrayState(
                f"{self.name}@{source}", self.dtype, len(self.values), False, True,
                self.identical_shapes, self.element_shape, aggregate=True)
            g.shapes = list(self.shapes)
        return g


def _index(i) -> int:
    if np.ndim(i) != 0:
        raise _err(f"TensorArray index must be a scalar, got shape {list(np.shape(i))}")
    return int(i)


def _check_dtype(ta: TensorArrayState, dtype, what: str) -> None:
    if dtype != ta.dtype:
        raise _err(f"TensorArray dtype is {ta.dtype.name} but Op {what} dtype {dtype.name}.")


@register_kernel("TensorArrayV3")
def _tensor_array(node):
    dtype = node.attr("dtype")
    shape = node.attr("element_shape")
    dims = None if shape is None else shape.as_tuple()
    dynamic, clear = bool(node.attr("dynamic_size")), bool(node.attr("clear_after_read"))
    identical = bool(node.attr("identical_element_shapes"))
    name = node.attr("tensor_array_name") or node.name

    def run(size):
        n = _index(size)
        if n < 0:
            raise _err(f"Size should be >= 0, got {n}")
        ta = TensorArrayState(name, dtype, n, dynamic, clear, identical,
                              None if dims is None else tuple(dims))
        return ta, _FLOW

    return run


@register_kernel("TensorArrayGradV3")
def _grad(node):
    source = node.attr("source")

    def run(handle, flow_in):
        return handle.new_grad(source), _FLOW

    return run


@register_kernel("TensorArrayWriteV3")
def _write(node):
    dtype = node.attr("T")

    def run(handle, index, value, flow_in):
        _check_dtype(handle, dtype, "is trying to write")
        handle.write(_index(index), value)
        return flow_in

    return run


@register_kernel("TensorArrayReadV3")
def _read(node):
    dtype = node.attr("dtype")

    def run(handle, index, flow_in):
        _check_dtype(handle, dtype, "requested")
        return handle.read(_index(index))

    return run


@register_kernel("TensorArrayGatherV3")
def _gather(node):
    dtype = node.attr("dtype")
    attr_shape = node.attr("element_shape")

    def run(handle, indices, flow_in):
        _check_dtype(handle, dtype, "requested")
        idx = np.asarray(indices).reshape(-1)
        if idx.size == 0:
            return _empty(handle, attr_shape, dtype)
        values = [handle.read(int(i)) for i in idx]
        _check_same_shapes(values, idx)
        return np.stack(values).astype(dtype.np_dtype, copy=False)

    return run


def _empty(handle, attr_shape, dtype):
    shape = handle.element_shape
    if shape is None or None in shape:
        dims = None if attr_shape is None else attr_shape.as_tuple()
        shape = dims if dims is not None and None not in dims else None
    if shape is None:
        raise _err("TensorArray has size zero, but element shape <unknown> is not fully "
                   "defined. Currently only static shapes are supported when packing zero-size "
                   "TensorArrays.")
    return np.zeros((0,) + tuple(shape), dtype=dtype.np_dtype)


def _check_same_shapes(values, idx) -> None:
    first = values[0].shape
    for k, v in enumerate(values):
        if v.shape != first:
            raise _err(f"TensorArray has inconsistent shapes. Index {int(idx[0])} has shape: "
                       f"{_shape_str(first)} but index {int(idx[k])} has shape: "
                       f"{_shape_str(v.shape)}")


@register_kernel("TensorArrayScatterV3")
def _scatter(node):
    dtype = node.attr("T")

    def run(handle, indices, value, flow_in):
        _check_dtype(handle, dtype, "is trying to write")
        idx = np.asarray(indices)
        value = np.asarray(value)
        if idx.ndim != 1:
            raise _err(f"Expected indices to be a vector, but received shape: "
                       f"{_shape_str(idx.shape)}")
        if value.ndim < 1 or value.shape[0] != idx.shape[0]:
            raise _err(f"Expected len(indices) == values.shape[0], but saw: {idx.shape[0]} vs. "
                       f"{value.shape[0] if value.ndim else 'scalar'}")
        for k, i in enumerate(idx):
            handle.write(int(i), value[k])
        return flow_in

    return run


@register_kernel("TensorArrayConcatV3")
def _concat(node):
    dtype = node.attr("dtype")
    except0 = node.attr("element_shape_except0")

    def run(handle, flow_in):
        _check_dtype(handle, dtype, "requested")
        values = [handle.read(i) for i in range(handle.size())]
        lengths = np.array([v.shape[0] if v.ndim else -1 for v in values], dtype=np.int64)
        for k, v in enumerate(values):
            if v.ndim == 0:
                raise _err(f"Concat saw a scalar shape at index {k} but requires at least "
                           "vectors. Did you mean to call TensorArray::Pack instead?")
        if not values:
            dims = None if except0 is None else except0.as_tuple()
            if dims is None or None in dims:
                raise _err("TensorArray has size zero, but element_shape_except0 <unknown> is "
                           "not fully defined. Currently only static shapes are supported "
                           "when concatenating zero-size TensorArrays.")
            return np.zeros((0,) + tuple(dims), dtype=dtype.np_dtype), lengths
        return np.concatenate(values).astype(dtype.np_dtype, copy=False), lengths

    return run


@register_kernel("TensorArraySplitV3")
def _split(node):
    dtype = node.attr("T")

    def run(handle, value, lengths, flow_in):
        _check_dtype(handle, dtype, "is trying to write")
        value = np.asarray(value)
        lengths = np.asarray(lengths).reshape(-1)
        if value.ndim < 1:
            raise _err(f"Expected value to be at least a vector, but received shape: "
                       f"{_shape_str(value.shape)}")
        if int(lengths.sum()) != value.shape[0]:
            raise _err(f"Expected sum of lengths to be equal to values.shape[0], but sum of "
                       f"lengths is {int(lengths.sum())} and value's shape is: "
                       f"{_shape_str(value.shape)}")
        if not handle.dynamic and lengths.size != handle.size():
            raise _err(f"TensorArray's size is not equal to the size of lengths "
                       f"({lengths.size} vs. {handle.size()}), and the TensorArray is not "
                       "marked as dynamically resizeable")
        starts = np.concatenate([[0], np.cumsum(lengths)])
        for k in range(lengths.size):
            handle.write(k, value[starts[k]:starts[k + 1]])
        return flow_in

    return run


@register_kernel("TensorArraySizeV3")
def _size(node):
    def run(handle, flow_in):
        return np.int32(handle.size())

    return run


@register_kernel("TensorArrayCloseV3")
def _close(node):
    def run(handle):
        handle.closed = True
        handle.values = []

    return run
