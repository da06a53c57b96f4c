"""Freezing (TF's graph_util and tools/freeze_graph.py): variables become constants, the graph
is cut down to what the outputs need, training-only nodes go, and one GraphDef file holds the
whole model, readable by TensorFlow.

    frozen = convert_variables_to_constants(sess, sess.graph.as_graph_def(), ["probs"])
    tf.train.write_graph(frozen, ".", "frozen.pb", as_text=False)

Works on GraphDef protos (ours; TensorFlow's are converted by their bytes).
"""

from __future__ import annotations

import logging
import re

from tensorweave.proto import convert, graph_pb2, node_def_pb2

_LOG = logging.getLogger("tensorweave")
_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")
_REF_OPS = {"RefSwitch": "Switch", "RefMerge": "Merge", "RefEnter": "Enter",
            "RefExit": "Exit", "RefNextIteration": "NextIteration", "RefIdentity": "Identity"}


def node_name(tensor_or_input: str) -> str:
    """`^a`, `a:1`, `a` → `a`."""
    name = tensor_or_input[1:] if tensor_or_input.startswith("^") else tensor_or_input
    return re.sub(r":\d+$", "", name)


def as_graph_def(graph_def) -> graph_pb2.GraphDef:
    """Our GraphDef proto for `graph_def` (ours, or any message with GraphDef's bytes).

    Raises:
      TypeError: not a GraphDef.
    """
    if isinstance(graph_def, graph_pb2.GraphDef):
        return graph_def
    if not hasattr(graph_def, "SerializeToString") or not hasattr(graph_def, "node"):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto.")
    return graph_pb2.GraphDef.FromString(graph_def.SerializeToString())


def extract_sub_graph(graph_def, dest_nodes) -> graph_pb2.GraphDef:
    """The nodes `dest_nodes` need (data and control inputs), in the original order.

    Raises:
      TypeError: `graph_def` is not a GraphDef, or `dest_nodes` is a string.
      AssertionError: a destination is not in the graph (TF's error).
    """
    graph_def = as_graph_def(graph_def)
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be an iterable of strings.")
    by_name = {n.name: n for n in graph_def.node}
    wanted: set[str] = set()
    stack = [node_name(d) for d in dest_nodes]
    for d in stack:
        if d not in by_name:
            raise AssertionError(f"{d} is not in graph")
    while stack:
        name = stack.pop()
        if name in wanted:
            continue
        wanted.add(name)
        stack.extend(node_name(i) for i in by_name[name].input)
    out = graph_pb2.GraphDef()
    out.node.extend(n for n in graph_def.node if n.name in wanted)
    out.library.CopyFrom(graph_def.library)
    out.versions.CopyFrom(graph_def.versions)
    return out


def _resource_reads(graph_def) -> dict[str, str]:
    """{VarHandleOp name: a ReadVariableOp output reading it}."""
    return {node_name(n.input[0]): n.name + ":0" for n in graph_def.node
            if n.op == "ReadVariableOp" and n.input}


def _to_freeze(graph_def, whitelist, blacklist) -> list:
    return [n for n in graph_def.node if n.op in _VARIABLE_OPS
            and (whitelist is None or n.name in whitelist)
            and (blacklist is None or n.name not in blacklist)]


def _const_node(node, value) -> node_def_pb2.NodeDef:
    out = node_def_pb2.NodeDef(name=node.name, op="Const", device=node.device)
    dtype = node.attr["dtype"].type
    out.attr["dtype"].type = dtype
    out.attr["value"].tensor.CopyFrom(convert.tensor_to_proto(value, _dtype(dtype)))
    return out


def _dtype(enum: int):
    from tensorweave import dtypes

    return dtypes.as_dtype(enum)


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None) -> graph_pb2.GraphDef:
    """The subgraph of `output_node_names` with every variable it reads replaced by a Const
    holding the variable's value in `sess` (resource reads become Identity).

    Raises:
      AssertionError: an output is not in the graph. errors.OpError: a variable cannot be read
      (e.g. not initialized).
    """
    full = as_graph_def(input_graph_def)
    graph = extract_sub_graph(full, output_node_names)
    variables = _to_freeze(graph, variable_names_whitelist, variable_names_blacklist)
    reads = _resource_reads(full)
    fetches = [reads.get(n.name) if n.op == "VarHandleOp" else n.name + ":0"
               for n in variables]
    missing = [n.name for n, f in zip(variables, fetches) if f is None]
    if missing:
        raise ValueError(f"Cannot read resource variables {missing}: no ReadVariableOp")
    values = sess.run(fetches) if fetches else []
    frozen = {n.name: _const_node(n, v) for n, v in zip(variables, values)}
    out = graph_pb2.GraphDef()
    for node in graph.node:
        out.node.append(frozen.get(node.name) or _unref(node, frozen))
    out.library.CopyFrom(graph.library)
    out.versions.CopyFrom(graph.versions)
    _LOG.info("Froze %d variables.", len(frozen))
    _LOG.info("Converted %d variables to const ops.", len(frozen))
    return out


def _unref(node, frozen) -> node_def_pb2.NodeDef:
    """`node` reading frozen variables by value (ReadVariableOp → Identity, Ref* → plain)."""
    out = node_def_pb2.NodeDef()
    out.CopyFrom(node)
    if node.op == "ReadVariableOp" and node_name(node.input[0]) in frozen:
        out.op = "Identity"
        out.attr["T"].type = node.attr["dtype"].type
        del out.attr["dtype"]
    elif node.op in _REF_OPS and any(node_name(i) in frozen for i in node.input):
        out.op = _REF_OPS[node.op]
    return out


def remove_training_nodes(input_graph, protected_nodes=None) -> graph_pb2.GraphDef:
    """Without CheckNumerics, and with Identity nodes spliced out (consumers read their input)
    unless protected, read through a control edge, or carrying control inputs."""
    graph = as_graph_def(input_graph)
    protected = set(protected_nodes or [])
    controlled = {node_name(i) for n in graph.node for i in n.input if i.startswith("^")}
    splice: dict[str, str] = {}
    for n in graph.node:
        removable = n.op == "CheckNumerics" or (
            n.op == "Identity" and n.name not in controlled and
            not any(i.startswith("^") for i in n.input))
        if removable and n.name not in protected and n.input:
            splice[n.name] = n.input[0]
    out = graph_pb2.GraphDef()
    for n in graph.node:
        if n.name in splice:
            continue
        copy = out.node.add()
        copy.CopyFrom(n)
        del copy.input[:]
        copy.input.extend(_spliced(i, splice) for i in n.input)
    out.library.CopyFrom(graph.library)
    out.versions.CopyFrom(graph.versions)
    return out


def _spliced(inp: str, splice: dict[str, str]) -> str:
    """Follows chains of removed nodes back to what they forwarded."""
    control = inp.startswith("^")
    name, port = (inp[1:] if control else inp), ""
    if ":" in name:
        name, port = name.rsplit(":", 1)
    while name in splice and port in ("", "0"):
        target = splice[name]
        name, port = (target.rsplit(":", 1) + [""])[:2] if ":" in target else (target, "")
    if control:
        return "^" + name
    return f"{name}:{port}" if port and port != "0" else name


__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes"]


# -- the freeze_graph tool ----------------------------------------------------------------------
def freeze_graph(output_node_names, input_graph=None, input_checkpoint=None,
                 input_meta_graph=None, input_saved_model_dir=None,
                 saved_model_tags=("serve",), clear_devices=True, initializer_nodes=(),
                 variable_names_whitelist=None, variable_names_blacklist=None):
    """TF's freeze_graph: loads a graph (GraphDef file + checkpoint, MetaGraphDef + checkpoint,
    or a SavedModel), restores its variables, and returns the frozen GraphDef.

    Raises:
      ValueError: no input given, or a GraphDef/MetaGraphDef without a checkpoint.
      OSError: a file that cannot be read. AssertionError: an output not in the graph.
    """
    from tensorweave.client.session import Session
    from tensorweave.framework.graph import Graph
    from tensorweave.ops.importer import import_graph_def
    from tensorweave.saved_model import loader
    from tensorweave.training.graph_io import read_graph_def
    from tensorweave.training.meta_graph import import_meta_graph

    graph = Graph()
    with graph.as_default(), Session(graph=graph) as sess:
        if input_saved_model_dir:
            loader.load(sess, list(saved_model_tags), input_saved_model_dir)
        elif input_meta_graph or input_graph:
            if not input_checkpoint:
                raise ValueError("--input_checkpoint is needed with --input_graph or "
                                 "--input_meta_graph")
            if input_meta_graph:
                saver = import_meta_graph(input_meta_graph, clear_devices=clear_devices)
            else:
                graph_def = read_graph_def(input_graph)
                if clear_devices:
                    for node in graph_def.node:
                        node.device = ""
                import_graph_def(graph_def, name="")
                saver = _saver_for_checkpoint(graph, input_checkpoint)
            if saver is not None:
                saver.restore(sess, input_checkpoint)
        else:
            raise ValueError("give --input_graph, --input_meta_graph or --input_saved_model_dir")
        if initializer_nodes:
            sess.run(list(initializer_nodes))
        graph_def = graph.as_graph_def()
        if clear_devices:
            for node in graph_def.node:
                node.device = ""
        return convert_variables_to_constants(sess, graph_def, list(output_node_names),
                                              variable_names_whitelist,
                                              variable_names_blacklist)


def _saver_for_checkpoint(graph, checkpoint: str):
    """A Saver over the graph's variables that the checkpoint holds (a bare GraphDef has no
    variable collections), as TF's freeze_graph builds it; None when there are none."""
    from tensorweave.training.checkpoint_utils import list_variables
    from tensorweave.training.saver import Saver

    var_list = {}
    for name, _ in list_variables(checkpoint):
        try:
            var_list[name] = graph.get_tensor_by_name(name + ":0")
        except KeyError:
            continue
    return Saver(var_list) if var_list else None
