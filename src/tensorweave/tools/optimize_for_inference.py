"""`optimize_for_inference` (TF's tools/optimize_for_inference_lib.py) on a frozen GraphDef:
inputs become Placeholders and what the outputs do not need goes (`strip_unused`), training
nodes go (`remove_training_nodes`), inference batch norms fold into the convolution before them
(`fold_batch_norms`), then the master's own passes fold constants and simplify arithmetic.
Every op in the result is a TensorFlow op, so TensorFlow runs the file.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, ir
from tensorweave.master.passes import PassContext, optimize
from tensorweave.master.passes.graph_view import GraphView
from tensorweave.proto import convert, graph_pb2, node_def_pb2
from tensorweave.tools.freeze_graph import (
    as_graph_def,
    extract_sub_graph,
    node_name,
    remove_training_nodes,
)

# NOTE: passes whose rewrites stay within TensorFlow's op set (the remapper's fused kernels
# are tensorweave's own, so it is left out).
INFERENCE_PASSES = ("constant_folding", "arithmetic", "cse")
_BN = frozenset(["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"])


def strip_unused(input_graph_def, input_node_names, output_node_names, placeholder_type_enum):
    """Each input node replaced by a Placeholder (its dtype from `placeholder_type_enum`, one
    enum or one per input; its shape kept when known), then cut down to the outputs.

    Raises:
      KeyError: an input node that is not in the graph.
    """
    graph = as_graph_def(input_graph_def)
    names = {n.name for n in graph.node}
    types = placeholder_type_enum if isinstance(placeholder_type_enum, (list, tuple)) \
        else [placeholder_type_enum] * len(input_node_names)
    wanted = dict(zip(input_node_names, types))
    for name in wanted:
        if name not in names:
            raise KeyError(f"Input node {name} not found in graph")
    out = graph_pb2.GraphDef()
    for node in graph.node:
        if node.name in wanted:
            out.node.append(_placeholder(node, int(getattr(wanted[node.name],
                                                           "as_datatype_enum",
                                                           wanted[node.name]))))
        else:
            out.node.add().CopyFrom(node)
    out.library.CopyFrom(graph.library)
    out.versions.CopyFrom(graph.versions)
    return extract_sub_graph(out, output_node_names)


def _placeholder(node, dtype_enum: int) -> node_def_pb2.NodeDef:
    ph = node_def_pb2.NodeDef(name=node.name, op="Placeholder", device=node.device)
    ph.attr["dtype"].type = dtype_enum
    if "shape" in node.attr:
        ph.attr["shape"].CopyFrom(node.attr["shape"])
    elif "_output_shapes" in node.attr and node.attr["_output_shapes"].list.shape:
        ph.attr["shape"].shape.CopyFrom(node.attr["_output_shapes"].list.shape[0])
    return ph


# -- batch norm folding -------------------------------------------------------------------------
def _const(view: GraphView, inp: str):
    src = view.producer(inp)
    if src is None or src.op != "Const" or ir.parse_input(inp)[1] != 0:
        return None
    return np.asarray(src.attrs["value"])


def _only_output0_used(view: GraphView, name: str) -> bool:
    return all(ir.parse_input(i)[1] == 0 for c in view.consumers(name)
               for i in view.nodes[c].inputs if ir.parse_input(i)[0] == name)


def _fold_one(view: GraphView, bn: ir.NodeDef) -> bool:
    """FusedBatchNorm(Conv2D(x, W), γ, β, μ, σ²) → BiasAdd(Conv2D(x, W·s), β − μ·s),
    s = γ/√(σ²+ε), when W and the statistics are constants and only output 0 is read."""
    if bn.attrs.get("is_training", True) or not _only_output0_used(view, bn.name):
        return False
    conv = view.producer(bn.inputs[0])
    if conv is None or conv.op != "Conv2D" or len(view.consumers(conv.name)) != 1 or \
            conv.attrs.get("data_format", "NHWC") != bn.attrs.get("data_format", "NHWC"):
        return False
    consts = [_const(view, i) for i in [conv.inputs[1]] + bn.data_inputs()[1:5]]
    if any(c is None for c in consts) or consts[3].size == 0:
        return False
    w, gamma, beta, mean, var = consts
    s = gamma / np.sqrt(var + bn.attrs.get("epsilon", 0.0001))
    w_name = view.unique(f"{conv.name}/bn_folded_weights")
    b_name = view.unique(f"{bn.name}/bn_folded_bias")
    for name, value in ((w_name, (w * s).astype(w.dtype)),
                        (b_name, (beta - mean * s).astype(w.dtype))):
        view.add(ir.NodeDef(name, "Const", [], conv.device,
                            {"dtype": dtypes.as_dtype(value.dtype), "value": value}),
                 before=conv.name)
    new_conv = view.edit(conv.name)
    new_conv.inputs[1] = w_name
    fmt = bn.attrs.get("data_format", "NHWC")
    view.put(ir.NodeDef(bn.name, "BiasAdd", [conv.name, b_name] + [
        "^" + c for c in bn.control_inputs()], bn.device,
        {"T": dtypes.as_dtype(w.dtype), "data_format": fmt}))
    return True


def fold_batch_norms(input_graph_def):
    """Every foldable inference batch norm folded into its Conv2D (see `_fold_one`)."""
    graph = convert.graph_from_proto(as_graph_def(input_graph_def))
    view = GraphView(graph)
    for node in list(view.nodes.values()):
        if node.op in _BN:
            _fold_one(view, node)
    out = convert.graph_to_proto(view.to_graph())
    return out


def optimize_for_inference(input_graph_def, input_node_names, output_node_names,
                           placeholder_type_enum, toco_compatible=False):
    """The frozen graph ready to serve: see the module docstring.

    Raises:
      KeyError / AssertionError: an input or output node is not in the graph.
    """
    del toco_compatible
    graph = strip_unused(input_graph_def, input_node_names, output_node_names,
                         placeholder_type_enum)
    graph = remove_training_nodes(graph, protected_nodes=output_node_names)
    graph = fold_batch_norms(graph)
    keep = set(input_node_names) | {node_name(n) for n in output_node_names}
    folded = optimize(convert.graph_from_proto(graph), PassContext(keep=keep),
                      only=list(INFERENCE_PASSES))
    return extract_sub_graph(convert.graph_to_proto(folded), output_node_names)


__all__ = ["fold_batch_norms", "optimize_for_inference", "strip_unused"]
