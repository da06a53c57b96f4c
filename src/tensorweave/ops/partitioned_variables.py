"""Partitioned variables (TF1's partitioned_variables.py and `PartitionedVariable`).

A partitioner maps (shape, dtype) to the number of parts along each axis (at most one axis
above 1). `get_variable(partitioner=...)` then creates one Variable per part, named
`<name>/part_<i>`, each knowing where it sits in the full tensor (`SaveSliceInfo`), and
returns a `PartitionedVariable` over them. The Saver saves the parts as slices of the full
tensor `<name>`, as TensorFlow does, so checkpoints move both ways.

Example:
    emb = tf.get_variable("emb", [1000, 64], partitioner=tf.fixed_size_partitioner(4))
    rows = tf.nn.embedding_lookup(emb, ids)   # gathers from each part on its device
"""

from __future__ import annotations

import math

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.ops.apply import apply_op
from tensorweave.ops.op_scope import OpScope
from tensorweave.shapes import TensorShape


class SaveSliceInfo:
    """Where one part sits in its full variable: TF's `Variable.SaveSliceInfo`."""

    def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None,
                 save_slice_info_def=None, import_scope=None):
        if save_slice_info_def is not None:
            d = save_slice_info_def
            full_name = f"{import_scope}/{d.full_name}" if import_scope else d.full_name
            full_shape, var_offset, var_shape = d.full_shape, d.var_offset, d.var_shape
        self.full_name = full_name
        self.full_shape = [int(x) for x in full_shape]
        self.var_offset = [int(x) for x in var_offset]
        self.var_shape = [int(x) for x in var_shape]

    @property
    def spec(self) -> str:
        """The `shape_and_slices` text SaveV2/RestoreV2 take: "10 3 0,3:0,3"."""
        dims = " ".join(str(d) for d in self.full_shape)
        return dims + " " + ":".join(f"{o},{s}" for o, s in zip(self.var_offset,
                                                                 self.var_shape))

    def __repr__(self) -> str:
        return f"SaveSliceInfo({self.full_name!r}, spec={self.spec!r})"


class PartitionInfo:
    """What an initializer learns about the part it initializes (TF's `_PartitionInfo`)."""

    def __init__(self, full_shape, var_offset):
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape) -> int:
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]

    def single_slice_dim(self, shape):
        for i, (n, full) in enumerate(zip(shape, self.full_shape)):
            if n != full:
                return i
        return None


class PartitionedVariable:
    """The parts of one partitioned variable (TF1 `PartitionedVariable`).

    Iterating gives the part Variables in order; `as_tensor()` (and conversion to a tensor)
    concatenates their values along the partitioned axis.
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not variable_list:
            raise ValueError("variable_list must be non-empty")
        self._name = name
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._get_save_slice_info().var_offset)
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self) -> int:
        return len(self._variable_list)

    def _get_variable_list(self) -> list:
        return self._variable_list

    def _get_partitions(self) -> list[int]:
        return self._partitions

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _partition_axes(self) -> list[int]:
        return [i for i, n in enumerate(self._partitions) if n > 1] or [0]

    def as_tensor(self):
        """The full value: the parts concatenated along the partitioned axis."""
        parts = [v.value() for v in self._variable_list]
        if len(parts) == 1:
            return apply_op("Identity", parts[0], name=self._name)
        with OpScope(None, "ConcatPartitions", parts):
            return apply_op("ConcatV2", parts, self._partition_axes()[0], name="concat")

    def _concat(self):
        return self.as_tensor()

    def __repr__(self) -> str:
        return (f"<tf.PartitionedVariable '{self._name}' shape={self._shape} "
                f"partitions={self._partitions}>")


def _convert(value, dtype=None, name=None, as_ref=False):
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a "
                                  "reference.")
    out = value.as_tensor()
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(out.dtype):
        raise ValueError(f"Incompatible type conversion requested to type {dtype} for "
                         f"variable of type {out.dtype}")
    return out


register_tensor_conversion_function(PartitionedVariable, _convert)


# -- partitioners ----------------------------------------------------------------------------
def fixed_size_partitioner(num_shards, axis=0):
    """Splits `axis` into `num_shards` parts (fewer when the axis is shorter)."""
    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, TensorShape(shape).as_list()[axis])
        return partitions
    return _partitioner


def _element_bytes(dtype, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype).base_dtype
    return bytes_per_string_element if dtype == dtypes.string else dtype.size


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """Parts along `axis` of at most `max_shard_bytes` each (at least one slice each), at most
    `max_shards` of them.

    Raises:
      ValueError: a non-positive byte count or `max_shards`.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive. "
                         f"Currently, max_shard_bytes is {max_shard_bytes} and "
                         f"bytes_per_string_element is {bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        shape = TensorShape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        dims = shape.as_list()
        slice_bytes = shape.num_elements() / dims[axis] * _element_bytes(
            dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / slice_bytes))
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        partitions = [1] * len(dims)
        partitions[axis] = min(max_shards, shards) if max_shards else shards
        return partitions
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """As many parts along `axis` as keep each at least `min_slice_size` bytes, at most
    `max_partitions` (and at most the axis' length)."""
    def _partitioner(shape, dtype):
        shape = TensorShape(shape)
        dims = shape.as_list()
        if axis >= len(dims):
            raise ValueError(f"Can not partition on axis {axis} as shape has {len(dims)} "
                             "dims")
        total = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        partitions = [1] * len(dims)
        partitions[axis] = max(1, min(dims[axis], max_partitions,
                                      int(math.ceil(total / min_slice_size))))
        return partitions
    return _partitioner


# -- building the parts ----------------------------------------------------------------------
def check_partitions(name: str, shape: TensorShape, partitions) -> int:
    """The partitioned axis. Raises ValueError on partitions that do not fit `shape`."""
    partitions = list(partitions)
    dims = shape.as_list()
    if len(partitions) != len(dims) or any(not isinstance(p, int) or p < 1
                                           for p in partitions):
        raise ValueError(f"Partitioner returned invalid partitions for variable {name}: "
                         f"{partitions} (the shape is {dims})")
    if any(p > n for p, n in zip(partitions, dims)):
        raise ValueError(f"Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {partitions} vs. {dims}")
    axes = [i for i, p in enumerate(partitions) if p > 1]
    if len(axes) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {dims}, "
                         f"partitioning: {partitions}")
    return axes[0] if axes else 0


def iter_slices(full_shape: list[int], num_slices: int, axis: int):
    """(offset, shape) of each part: the first `full % num` parts one row longer (TF's)."""
    size, extra = divmod(full_shape[axis], num_slices)
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[axis] = size + (1 if i < extra else 0)
        yield list(offset), shape
        offset[axis] += shape[axis]


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """The parts (a list of Variables) of a variable of `shape` cut as `slicing` says, named
    `<name>/part_i` (TF1 `tf.create_partitioned_variables`).

    Raises:
      ValueError: `shape` and `slicing` differ in length, or `shape` is a scalar's.
    """
    from tensorweave.ops import variable_scope as vs

    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with vs.variable_scope(name, "PartitionedVariable", reuse=reuse):
        parts = vs.get_variable("", shape, dtype, initializer=initializer,
                                trainable=trainable, collections=collections,
                                partitioner=lambda **unused: list(slicing))
    return list(parts)


def slice_initial_value(value, offset, shape):
    """The part of a constant initial value that a part starts from."""
    value = convert_to_tensor(value)
    return apply_op("Slice", value, offset, shape)


__all__ = ["PartitionedVariable", "SaveSliceInfo", "PartitionInfo", "fixed_size_partitioner",
           "variable_axis_size_partitioner", "min_max_variable_partitioner",
           "create_partitioned_variables"]
