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
