"""`tensorweave freeze --output_node_names probs --output_graph frozen.pb (--input_graph G.pb
--input_checkpoint CKPT | --input_meta_graph M.meta --input_checkpoint CKPT |
--input_saved_model_dir DIR) [--optimize_for_inference --input_node_names x]`: TF's
freeze_graph tool (same flag names). Writes one GraphDef with the variables as constants
(text when --output_graph ends in .pbtxt); TensorFlow reads it.
"""

from __future__ import annotations

import os

from tensorweave.cli.main import UsageError, command


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def _args(p) -> None:
    p.add_argument("--input_graph", help="GraphDef file (.pb binary, .pbtxt text)")
    p.add_argument("--input_meta_graph", help="MetaGraphDef file (.meta)")
    p.add_argument("--input_saved_model_dir", help="SavedModel directory")
    p.add_argument("--saved_model_tags", default="serve", help="comma-separated tags")
    p.add_argument("--input_checkpoint", help="checkpoint prefix the variables come from")
    p.add_argument("--output_graph", required=True, help="where to write the frozen GraphDef")
    p.add_argument("--output_node_names", required=True, help="comma-separated node names")
    p.add_argument("--initializer_nodes", default="", help="nodes to run before freezing")
    p.add_argument("--variable_names_whitelist", default="")
    p.add_argument("--variable_names_blacklist", default="")
    p.add_argument("--clear_devices", default="true", choices=["true", "false"])
    p.add_argument("--optimize_for_inference", action="store_true",
                   help="then strip unused nodes, fold batch norms and constants")
    p.add_argument("--input_node_names", default="",
                   help="with --optimize_for_inference: the graph's inputs")


def _check(args) -> None:
    given = [f for f in ("input_graph", "input_meta_graph", "input_saved_model_dir")
             if getattr(args, f)]
    if len(given) != 1:
        raise UsageError("give exactly one of --input_graph, --input_meta_graph, "
                         "--input_saved_model_dir", "see `tensorweave freeze --help`")
    path = getattr(args, given[0])
    if not os.path.exists(path):
        raise UsageError(f"--{given[0]} {path}: no such file or directory", "check the path")
    if given[0] != "input_saved_model_dir" and not args.input_checkpoint:
        raise UsageError(f"--{given[0]} needs --input_checkpoint", "give the checkpoint prefix")
    if args.optimize_for_inference and not _names(args.input_node_names):
        raise UsageError("--optimize_for_inference needs --input_node_names",
                         "name the graph's input placeholders")


@command("freeze", "freeze variables into constants: one GraphDef file (TF's freeze_graph)")(
    _args)
def _freeze(args) -> int:
    from google.protobuf import text_format

    from tensorweave.tools import freeze_graph, optimize_for_inference

    _check(args)
    outputs = _names(args.output_node_names)
    try:
        frozen = freeze_graph.freeze_graph(
            outputs, input_graph=args.input_graph, input_checkpoint=args.input_checkpoint,
            input_meta_graph=args.input_meta_graph,
            input_saved_model_dir=args.input_saved_model_dir,
            saved_model_tags=_names(args.saved_model_tags),
            clear_devices=args.clear_devices == "true",
            initializer_nodes=_names(args.initializer_nodes),
            variable_names_whitelist=_names(args.variable_names_whitelist) or None,
            variable_names_blacklist=_names(args.variable_names_blacklist) or None)
        if args.optimize_for_inference:
            from tensorweave import dtypes

            frozen = optimize_for_inference.optimize_for_inference(
                frozen, _names(args.input_node_names), outputs, dtypes.float32.as_datatype_enum)
    except (AssertionError, KeyError, ValueError, RuntimeError) as e:
        raise UsageError(str(e).strip("'\""), "check the node names and inputs") from None
    data = text_format.MessageToString(frozen).encode() if args.output_graph.endswith(
        ".pbtxt") else frozen.SerializeToString()
    with open(args.output_graph, "wb") as f:
        f.write(data)
    print(f"wrote {args.output_graph}: {len(frozen.node)} nodes, "
          f"{sum(n.op == 'Const' for n in frozen.node)} constants")
    return 0
