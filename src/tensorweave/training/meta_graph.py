"""Meta graphs: `export_meta_graph` / `import_meta_graph` (TF's framework/meta_graph.py).

A `MetaGraphDef` holds the GraphDef (with `_output_shapes`), the OpDefs it uses
(`meta_info_def.stripped_op_list`), the Saver's `SaverDef` and the graph's collections, so a
training graph can be rebuilt and resumed without the Python code that made it:

    saver = tf.train.import_meta_graph("model.ckpt-100.meta")
    saver.restore(sess, "model.ckpt-100")
    sess.run(tf.get_collection("train_op")[0])

Collections are stored as TF stores them: variables as serialized `VariableDef`s
(`bytes_list`), Tensors and Operations by name (`node_list`), ints (`int64_list`), floats
(`float_list`), strings (`bytes_list`). A collection whose items have no registered proto
function and are of none of those kinds is skipped with a warning. Other modules register the
proto functions of their collection types with `register_proto_function`.
"""

from __future__ import annotations

import logging
import os
import re

from google.protobuf import message, text_format

from tensorweave.formats.checkpoint.state import atomic_write_string_to_file
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.saveable import SaveableObject
from tensorweave.ops import io_ops  # noqa: F401  (a Saver's graph holds SaveV2, RestoreV2)
from tensorweave.proto import convert, meta_graph_pb2, op_def_pb2, saver_pb2, variable_pb2
from tensorweave.runtime.kernels.cpu import io as _io_kernels  # noqa: F401

_LOG = logging.getLogger("tensorweave")
_UNBOUND_INPUT_PREFIX = "$unbound_inputs_"
_WARNED: set[str] = set()
_CONTEXT_KEYS = frozenset(["cond_context", "while_context"])

# -- the proto-function registry (TF's ops.register_proto_function) --------------------------
_PROTO_FUNCTIONS: dict[str, tuple] = {}


def register_proto_function(collection_name: str, proto_type=None, to_proto=None,
                            from_proto=None) -> None:
    """Stores collection `collection_name` as serialized `proto_type` messages:
    `to_proto(item, export_scope=...)` (None skips the item) and
    `from_proto(proto, import_scope=...)` convert each item."""
    _PROTO_FUNCTIONS[collection_name] = (proto_type, to_proto, from_proto)


def get_collection_proto_type(key):
    return _PROTO_FUNCTIONS.get(key, (None, None, None))[0]


def get_to_proto_function(key):
    return _PROTO_FUNCTIONS.get(key, (None, None, None))[1]


def get_from_proto_function(key):
    return _PROTO_FUNCTIONS.get(key, (None, None, None))[2]


# -- name scopes -----------------------------------------------------------------------------
def strip_name_scope(name: str, export_scope) -> str:
    """`scope/x` → `x` (also inside `^scope/x` and `loc:@scope/x`)."""
    if not export_scope:
        return name
    scope = re.escape(export_scope.rstrip("/"))
    return re.sub(r"([\^]|loc:@|^)" + scope + r"[\/]+(.*)", r"\1\2", name, count=1)


def prepend_name_scope(name: str, import_scope) -> str:
    """`x` → `scope/x` (also inside `^x` and `loc:@x`)."""
    if not import_scope:
        return name
    scope = import_scope.rstrip("/")
    return re.sub(r"([\^]|loc:@|^)(.*)", lambda m: f"{m.group(1)}{scope}/{m.group(2)}", name,
                  count=1)


# -- variables in collections ----------------------------------------------------------------
_VARIABLE_COLLECTIONS = (
    GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES,
    GraphKeys.MODEL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
    GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.CONCATENATED_VARIABLES, GraphKeys.GLOBAL_STEP,
)


def variable_to_proto(var, export_scope=None):
    """A VariableDef naming the variable's ops, or None when it lies outside `export_scope`."""
    if export_scope and not var.name.startswith(export_scope):
        return None
    proto = variable_pb2.VariableDef(
        variable_name=strip_name_scope(var.name, export_scope),
        initializer_name=strip_name_scope(var.initializer.name, export_scope),
        snapshot_name=strip_name_scope(var.value().name, export_scope),
        trainable=bool(var.trainable), is_resource=False)
    if var.initial_value is not None:
        proto.initial_value_name = strip_name_scope(var.initial_value.name, export_scope)
    info = var._get_save_slice_info()
    if info is not None:
        proto.save_slice_info_def.CopyFrom(variable_pb2.SaveSliceInfoDef(
            full_name=strip_name_scope(info.full_name, export_scope),
            full_shape=list(info.full_shape), var_offset=list(info.var_offset),
            var_shape=list(info.var_shape)))
    return proto


def variable_from_proto(proto, import_scope=None):
    """The Variable bound to the ops a VariableDef names (in the default graph)."""
    from tensorweave.ops.variables import Variable

    return Variable(variable_def=proto, import_scope=import_scope)


for _key in _VARIABLE_COLLECTIONS:
    register_proto_function(_key, variable_pb2.VariableDef, variable_to_proto,
                            variable_from_proto)


# -- OpDefs ----------------------------------------------------------------------------------
def _arg_proto(arg) -> op_def_pb2.OpDef.ArgDef:
    p = op_def_pb2.OpDef.ArgDef(name=arg.name, type_attr=arg.type_attr,
                                number_attr=arg.number_attr, type_list_attr=arg.type_list_attr,
                                is_ref=arg.is_ref)
    if arg.dtype is not None:
        p.type = arg.dtype.as_datatype_enum
    return p


def _attr_proto(a) -> op_def_pb2.OpDef.AttrDef:
    p = op_def_pb2.OpDef.AttrDef(name=a.name, type=a.type)
    if a.has_default:
        p.default_value.CopyFrom(convert.attr_to_proto(a.default, a.type))
    if a.allowed:
        kind = "list(type)" if a.type in ("type", "list(type)") else "list(string)"
        p.allowed_values.CopyFrom(convert.attr_to_proto(list(a.allowed), kind))
    if a.minimum is not None:
        p.has_minimum, p.minimum = True, a.minimum
    return p


def op_def_to_proto(op_def) -> op_def_pb2.OpDef:
    """The protobuf OpDef of a registered op (TF's field layout)."""
    return op_def_pb2.OpDef(
        name=op_def.name, input_arg=[_arg_proto(a) for a in op_def.inputs],
        output_arg=[_arg_proto(a) for a in op_def.outputs],
        attr=[_attr_proto(a) for a in op_def.attrs.values()], is_stateful=op_def.stateful,
        is_commutative=op_def.is_commutative,
        allows_uninitialized_input=op_def.allows_uninitialized_input)


def stripped_op_list_for_graph(graph_def) -> op_def_pb2.OpList:
    """The OpDefs of the op types `graph_def` uses (functions' bodies included), sorted."""
    from tensorweave.ops.registry import OPS

    used = {n.op for n in graph_def.node}
    functions = {f.signature.name for f in graph_def.library.function}
    for f in graph_def.library.function:
        used.update(n.op for n in f.node_def)
    ops = [OPS.get(name) for name in sorted(used - functions)]
    return op_def_pb2.OpList(op=[op_def_to_proto(o) for o in ops if o is not None])


def _strip_default_attrs(graph_def) -> None:
    from tensorweave.ops.registry import OPS

    for node in graph_def.node:
        op_def = OPS.get(node.op)
        if op_def is None:
            continue
        for a in op_def.attrs.values():
            if a.has_default and a.name in node.attr and \
                    node.attr[a.name] == convert.attr_to_proto(a.default, a.type):
                del node.attr[a.name]


# -- export ----------------------------------------------------------------------------------
def _scoped_graph_def(graph_def, export_scope: str):
    """The nodes under `export_scope`, with the scope stripped from names and inputs.

    Raises:
      ValueError: a node in the scope reads a node outside it.
    """
    prefix = export_scope.rstrip("/") + "/"
    out = type(graph_def)()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        if not node.name.startswith(prefix):
            continue
        new = out.node.add()
        new.CopyFrom(node)
        new.name = node.name[len(prefix):]
        for i, inp in enumerate(node.input):
            if not inp.lstrip("^").startswith(prefix):
                raise ValueError(f"Node {node.name} in export scope {export_scope} reads "
                                 f"{inp}, which lies outside it")
            new.input[i] = strip_name_scope(inp, export_scope)
        if "_class" in node.attr:
            groups = [strip_name_scope(s.decode(), export_scope).encode()
                      for s in node.attr["_class"].list.s]
            del new.attr["_class"].list.s[:]
            new.attr["_class"].list.s.extend(groups)
    return out


def _kind_name(item) -> str | None:
    if isinstance(item, (str, bytes)):
        return "bytes_list"
    if isinstance(item, int):  # NOTE: bools too, as TF stores them
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    if isinstance(item, (Tensor, Operation, SaveableObject)) or hasattr(item,
                                                                         "_as_graph_element"):
        return "node_list"   # NOTE: a SaveableObject by its name, as TF stores it
    return None


def _included(item, export_scope) -> bool:
    name = item if isinstance(item, str) else getattr(item, "name", None)
    if not isinstance(name, str):
        return True
    return name.startswith(_UNBOUND_INPUT_PREFIX) or not export_scope or \
        name.startswith(export_scope)


def add_collection_def(meta_graph_def, key, graph=None, export_scope=None) -> None:
    """Adds collection `key` of `graph` to `meta_graph_def` (skipped, with a warning, when its
    items cannot be serialized)."""
    graph = graph or get_default_graph()
    if not isinstance(key, str):
        return  # NOTE: internal stores (variable store, scope store) use tuple keys
    items = [x for x in graph.get_collection(key) if _included(x, export_scope)]
    if not items:
        return
    try:
        col = meta_graph_def.collection_def[key]
        to_proto = get_to_proto_function(key)
        if to_proto is not None:
            for x in items:
                proto = to_proto(x, export_scope=export_scope)
                if proto is not None:
                    col.bytes_list.value.append(proto.SerializeToString(deterministic=True))
            return
        _add_plain_items(col, items, export_scope, key)
    except (TypeError, ValueError, AttributeError) as e:
        if key not in _WARNED:  # NOTE: once per collection, not at every checkpoint
            _WARNED.add(key)
            # NOTE: cond/while contexts are rebuilt from the imported ops' structure when
            # needed; leaving them out loses nothing a restore or a training step uses.
            log = _LOG.debug if key in _CONTEXT_KEYS else _LOG.warning
            log("Issue encountered when serializing: %s.\n%s", key, e)
        meta_graph_def.collection_def.pop(key, None)


def _add_plain_items(col, items, export_scope, key) -> None:
    kinds = {_kind_name(x) for x in items}
    if len(kinds) != 1 or None in kinds:
        raise TypeError(f"collection {key!r} mixes kinds or holds objects that cannot be "
                        f"serialized: {sorted(type(x).__name__ for x in items)[:5]}")
    kind = kinds.pop()
    if kind == "node_list":
        col.node_list.value.extend(strip_name_scope(x.name, export_scope) for x in items)
    elif kind == "bytes_list":
        col.bytes_list.value.extend(x.encode() if isinstance(x, str) else x for x in items)
    else:
        getattr(col, kind).value.extend(items)


def create_meta_graph_def(graph=None, graph_def=None, saver_def=None, collection_list=None,
                          export_scope=None, clear_devices=False,
                          strip_default_attrs=False, meta_info_def=None):
    """A MetaGraphDef of `graph` (default graph): GraphDef with shapes, stripped op list,
    SaverDef and collections."""
    graph = graph or get_default_graph()
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    if export_scope:
        graph_def = _scoped_graph_def(graph_def, export_scope)
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    if strip_default_attrs:
        _strip_default_attrs(graph_def)
    meta = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.stripped_op_list.CopyFrom(stripped_op_list_for_graph(graph_def))
    meta.meta_info_def.stripped_default_attrs = bool(strip_default_attrs)
    meta.graph_def.CopyFrom(graph_def)
    if saver_def is not None:
        meta.saver_def.CopyFrom(_as_saver_def(saver_def))
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        add_collection_def(meta, key, graph=graph, export_scope=export_scope)
    return meta


def _as_saver_def(saver_def) -> saver_pb2.SaverDef:
    if isinstance(saver_def, saver_pb2.SaverDef):
        return saver_def
    return saver_pb2.SaverDef.FromString(saver_def.SerializeToString())


def _as_graph_def_proto(graph_def):
    from tensorweave.proto import graph_pb2

    if graph_def is None or isinstance(graph_def, graph_pb2.GraphDef):
        return graph_def
    return graph_pb2.GraphDef.FromString(graph_def.SerializeToString())


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """TF1 `tf.train.export_meta_graph`: the MetaGraphDef, also written to `filename` (binary,
    or text with `as_text`) atomically when given.

    `clear_extraneous_savers` drops the nodes of other savers' `save*` scopes and the
    `savers` collection.

    Raises:
      ValueError: a node in `export_scope` reads a node outside it.
    """
    del save_debug_info, kwargs  # NOTE: no debug info is recorded
    graph = graph or get_default_graph()
    graph_def = _as_graph_def_proto(graph_def)
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    if clear_extraneous_savers and saver_def is not None:
        graph_def = _without_other_savers(graph_def, _as_saver_def(saver_def))
        if collection_list is None:
            collection_list = [k for k in graph.get_all_collection_keys()
                               if k != GraphKeys.SAVERS]
    meta = create_meta_graph_def(graph, graph_def, saver_def, collection_list, export_scope,
                                 clear_devices, strip_default_attrs, meta_info_def)
    if filename:
        write_meta_graph(meta, filename, as_text)
    return meta


def _without_other_savers(graph_def, saver_def):
    mine = saver_def.filename_tensor_name.split("/")[0]
    other = re.compile(r"^save(_\d+)?$")
    out = type(graph_def)()
    out.CopyFrom(graph_def)
    del out.node[:]
    for node in graph_def.node:
        top = node.name.split("/")[0]
        if not (other.match(top) and top != mine and "/" in node.name):
            out.node.add().CopyFrom(node)
    return out


def write_meta_graph(meta_graph_def, filename, as_text: bool = False) -> None:
    """Writes a MetaGraphDef atomically (temporary file, then rename)."""
    filename = os.fspath(filename)
    parent = os.path.dirname(filename)
    if parent:
        os.makedirs(parent, exist_ok=True)
    if as_text:
        atomic_write_string_to_file(filename, text_format.MessageToString(meta_graph_def))
        return
    from tensorweave.training.graph_io import _atomic_write

    _atomic_write(filename, meta_graph_def.SerializeToString(deterministic=True))


def read_meta_graph_file(filename) -> meta_graph_pb2.MetaGraphDef:
    """The MetaGraphDef in `filename`, binary or text.

    Raises:
      OSError: the file does not exist.
      ValueError: it holds neither form.
    """
    filename = os.fspath(filename)
    if not os.path.exists(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    try:
        return meta_graph_pb2.MetaGraphDef.FromString(data)
    except message.DecodeError:
        pass
    try:
        return text_format.Parse(data.decode("utf-8"), meta_graph_pb2.MetaGraphDef())
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise ValueError(f"{filename} is not a MetaGraphDef file: {e}") from None


# -- import ----------------------------------------------------------------------------------
def _as_meta_graph_def(meta_graph_or_file) -> meta_graph_pb2.MetaGraphDef:
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        return meta_graph_or_file
    if hasattr(meta_graph_or_file, "SerializeToString"):
        return meta_graph_pb2.MetaGraphDef.FromString(meta_graph_or_file.SerializeToString())
    return read_meta_graph_file(meta_graph_or_file)


def import_scoped_meta_graph_with_return_elements(
        meta_graph_or_file, clear_devices=False, graph=None, import_scope=None, input_map=None,
        unbound_inputs_col_name="unbound_inputs", restore_collections_predicate=None,
        return_elements=None):
    """Imports a meta graph's GraphDef and collections into `graph` (default graph).

    Returns:
      ({name without scope: Variable} of the imported global variables, the requested
      return elements or None).
    Raises:
      OSError, ValueError: see `read_meta_graph_file` and `import_graph_def`.
    """
    from tensorweave.ops.importer import import_graph_def

    meta = _as_meta_graph_def(meta_graph_or_file)
    graph = graph or get_default_graph()
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = type(graph_def)()
        graph_def.CopyFrom(meta.graph_def)
        for node in graph_def.node:
            node.device = ""
    producer = meta.meta_info_def.stripped_op_list \
        if meta.meta_info_def.HasField("stripped_op_list") else None
    with graph.as_default():
        scope = graph.unique_name(import_scope, mark_as_used=False) if import_scope else ""
        returned = import_graph_def(graph_def, input_map=input_map, name=import_scope or scope,
                                    producer_op_list=producer, return_elements=return_elements)
        _restore_collections(graph, meta, scope, unbound_inputs_col_name,
                             restore_collections_predicate or (lambda key: True))
        found = graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=scope or None)
    return {strip_name_scope(v.name, scope): v for v in found}, returned


def _restore_collections(graph, meta, scope: str, unbound_key: str, predicate) -> None:
    shared: dict[bytes, object] = {}  # NOTE: one Variable per VariableDef, in every collection
    for key, col in sorted(meta.collection_def.items()):
        if key == unbound_key or not predicate(key):
            continue
        kind = col.WhichOneof("kind")
        if kind is None:
            _LOG.error("Cannot identify data type for collection %s. Skipping.", key)
            continue
        from_proto = get_from_proto_function(key)
        if from_proto is not None and kind == "bytes_list":
            proto_type = get_collection_proto_type(key)
            for value in col.bytes_list.value:
                item = shared.get(value) if key in _VARIABLE_COLLECTIONS else None
                if item is None:
                    item = from_proto(proto_type.FromString(value), import_scope=scope)
                    shared[value] = item
                graph.add_to_collection(key, item)
        else:
            for item in _plain_items(graph, col, kind, scope):
                graph.add_to_collection(key, item)


def _plain_items(graph, col, kind: str, scope: str) -> list:
    values = list(getattr(col, kind).value)
    if kind == "node_list":
        return [graph.as_graph_element(prepend_name_scope(v, scope)) for v in values]
    if kind == "int64_list":
        return [int(v) for v in values]
    if kind == "bytes_list" and scope:
        return [prepend_name_scope(v.decode("utf-8", "replace"), scope) for v in values]
    return values


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None,
                             import_scope=None, input_map=None,
                             unbound_inputs_col_name="unbound_inputs",
                             restore_collections_predicate=None) -> dict:
    """As `import_scoped_meta_graph_with_return_elements`, returning only the variables."""
    return import_scoped_meta_graph_with_return_elements(
        meta_graph_or_file, clear_devices, graph, import_scope, input_map,
        unbound_inputs_col_name, restore_collections_predicate)[0]


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """TF1 `tf.train.import_meta_graph`: imports the graph and its collections; returns a
    Saver built from the meta graph's SaverDef (or over the imported variables when it has
    none), or None when there is nothing to save.

    Args:
      meta_graph_or_file: a MetaGraphDef (ours or TensorFlow's message) or a file name.
      clear_devices: drop the device of every imported node.
      import_scope: prefix for every imported name.
      **kwargs: `input_map`, `return_elements`, `unbound_inputs_col_name`,
        `restore_collections_predicate`, as TF accepts.

    Raises:
      OSError: the file does not exist.
      ValueError: the file is not a MetaGraphDef, or the graph cannot be imported (unknown op
        types are listed).
    """
    from tensorweave.training.saver import saver_from_imported_meta_graph

    meta = _as_meta_graph_def(meta_graph_or_file)
    kwargs.pop("return_elements", None)
    imported, _ = import_scoped_meta_graph_with_return_elements(
        meta, clear_devices=clear_devices, import_scope=import_scope, **kwargs)
    return saver_from_imported_meta_graph(meta, import_scope, imported)


__all__ = ["export_meta_graph", "import_meta_graph"]
