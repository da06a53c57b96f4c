"""Lookup-table op registrations (TF's `lookup_ops.cc`: the `*TableV2` family).

A table op (`HashTableV2`, `MutableHashTableV2`, `MutableHashTableOfTensorsV2`) outputs a
scalar `resource` holding the runtime table (see `runtime/kernels/cpu/lookup.py`); the other
ops read or change the table behind that handle. Names, inputs and attrs are TensorFlow's, so
a GraphDef with tables moves both ways. The table classes of `tf.lookup` are in
`ops/lookup_tables.py`.
"""

from __future__ import annotations

from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

OP_TYPES: list[str] = []   # every op type this module registers (for the test harness)

_TABLE_ATTRS = ["container: string = ''", "shared_name: string = ''",
                "use_node_name_sharing: bool = false", "key_dtype: type", "value_dtype: type"]


def _scalar(ctx):
    return TensorShape([])


def _handle_scalar(ctx) -> None:
    s = ctx.input_shape(0)
    if s.ndims not in (None, 0):
        raise ctx.fail(f"Shape must be rank 0 but is rank {s.ndims} (table_handle)")


def _find_shape(ctx):
    """values: keys' shape followed by the default value's (the value shape of the table)."""
    _handle_scalar(ctx)
    keys, default = ctx.input_shape(1), ctx.input_shape(2)
    if keys.ndims is None or default.ndims is None:
        return TensorShape(None)
    return keys.concatenate(default)


def _no_outputs(ctx):
    _handle_scalar(ctx)
    return []


def _size_shape(ctx):
    _handle_scalar(ctx)
    return TensorShape([])


def _export_shape(ctx):
    _handle_scalar(ctx)
    return [TensorShape([None]), TensorShape(None)]


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, stateful=True, **kw)


_register("HashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS,
          shape_fn=_scalar)
_register("MutableHashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS,
          shape_fn=_scalar)
_register("MutableHashTableOfTensorsV2", outputs=["table_handle: resource"],
          attrs=_TABLE_ATTRS + ["value_shape: shape = []"], shape_fn=_scalar)



def _dense_table_shape(ctx):
    """empty_key and deleted_key: scalars (the one key shape these tables take here)."""
    for i, what in ((0, "empty_key"), (1, "deleted_key")):
        s = ctx.input_shape(i)
        if s.ndims not in (None, 0):
            raise ctx.fail(f"{what} must be a scalar here (tables of vector keys are not "
                           f"supported), got shape {s}")
    return TensorShape([])


_register("MutableDenseHashTableV2", inputs=["empty_key: key_dtype", "deleted_key: key_dtype"],
          outputs=["table_handle: resource"],
          attrs=_TABLE_ATTRS + ["value_shape: shape = []",
                                "initial_num_buckets: int = 131072",
                                "max_load_factor: float = 0.8"],
          shape_fn=_dense_table_shape)

_register("LookupTableFindV2",
          inputs=["table_handle: resource", "keys: Tin", "default_value: Tout"],
          outputs=["values: Tout"], attrs=["Tin: type", "Tout: type"], shape_fn=_find_shape)
_register("LookupTableInsertV2", inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
          attrs=["Tin: type", "Tout: type"], shape_fn=_no_outputs)
_register("LookupTableImportV2", inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
          attrs=["Tin: type", "Tout: type"], shape_fn=_no_outputs)
_register("LookupTableRemoveV2", inputs=["table_handle: resource", "keys: Tin"],
          attrs=["Tin: type"], shape_fn=_no_outputs)
_register("LookupTableSizeV2", inputs=["table_handle: resource"], outputs=["size: int64"],
          shape_fn=_size_shape)
_register("LookupTableExportV2", inputs=["table_handle: resource"],
          outputs=["keys: Tkeys", "values: Tvalues"], attrs=["Tkeys: type", "Tvalues: type"],
          shape_fn=_export_shape)
_register("InitializeTableV2", inputs=["table_handle: resource", "keys: Tkey", "values: Tval"],
          attrs=["Tkey: type", "Tval: type"], shape_fn=_no_outputs)
_register("InitializeTableFromTextFileV2", inputs=["table_handle: resource", "filename: string"],
          attrs=["key_index: int >= -2", "value_index: int >= -2", "vocab_size: int >= -1 = -1",
                 "delimiter: string = '\t'", "offset: int = 0"],
          shape_fn=_no_outputs)
