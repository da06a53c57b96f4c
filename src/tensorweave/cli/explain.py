"""`tensorweave explain GRAPH --fetch NAME [--feed NAME] ...`: a fetch's graph at every stage.

GRAPH is a GraphDef file (`tf.train.write_graph`, binary or text), a MetaGraphDef file (the
`.meta` a `Saver` writes beside each checkpoint, or `tf.train.export_meta_graph`'s), or a
SavedModel directory (its `saved_model.pb`, the MetaGraphDef tagged `--tag`). Prints the node
count of every master stage and what each stage changed (`--full`: every stage whole,
`--counts`: the counts only; `--jit ON_1`: with XLA auto-clustering, whose clusters the
mark_for_compilation stage lists); `--dot`/`--svg` write the partitioned stage as a picture.
Names that are not in the graph, unknown passes and unreadable files are usage errors.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys

from tensorweave.cli.main import UsageError, at_least, command

_JIT_LEVELS = {"DEFAULT": 0, "OFF": -1, "ON_1": 1, "ON_2": 2}
_FORMATS = ("a GraphDef (.pb/.pbtxt), a MetaGraphDef (.meta) or a SavedModel directory")


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("graph", help=f"{_FORMATS}")
    p.add_argument("--fetch", action="append", required=True, metavar="NAME",
                   help="tensor (probs:0) or op to fetch (repeatable)")
    p.add_argument("--feed", action="append", default=[], metavar="NAME",
                   help="tensor that is fed (x:0; a bare op name means its output 0)")
    p.add_argument("--tag", action="append", default=[],
                   help="a SavedModel's MetaGraphDef with these tags (default: serve)")
    p.add_argument("--devices", type=at_least(1), default=1, help="number of CPU devices")
    p.add_argument("--disable", action="append", default=[], metavar="PASS",
                   help="switch an optimization pass off (repeatable)")
    p.add_argument("--jit", choices=sorted(_JIT_LEVELS), default="DEFAULT",
                   help="global_jit_level: ON_1/ON_2 show XLA auto-clustering "
                        "(needs tensorweave[xla])")
    p.add_argument("--full", action="store_true", help="print every stage's whole graph")
    p.add_argument("--counts", action="store_true", help="only print node counts per stage")
    p.add_argument("--dot", help="write the partitioned stage as Graphviz DOT here")
    p.add_argument("--svg", help="render the partitioned stage to SVG (needs Graphviz)")


@command("explain", "show a fetch's graph at every stage of the master")(_args)
def _explain(args) -> int:
    from tensorweave import errors
    from tensorweave.master.explain import explain

    _check_passes(args.disable)
    graph = _import(read_graph(args.graph, args.tag), args.graph)
    fetches = [_existing(graph, f, "--fetch") for f in args.fetch]
    feeds = [_existing(graph, f if ":" in f else f"{f}:0", "--feed") for f in args.feed]
    cfg = {"device_count": {"CPU": args.devices}, "disabled_passes": args.disable,
           "global_jit_level": _JIT_LEVELS[args.jit]}
    try:
        ex = explain(fetches, dict.fromkeys(feeds), graph=graph, config=cfg)
    except errors.InvalidArgumentError as e:
        raise UsageError(e.message.splitlines()[0],
                         "add a --feed for each placeholder the fetches need") from None
    _print(ex, args)
    return 0


def _print(ex, args) -> None:
    if args.counts:
        for name, n in ex.counts().items():
            print(f"{name:28s} {n:6d}")
    else:
        sys.stdout.write(ex.text(full=args.full))
    if args.dot:
        with open(args.dot, "w") as f:
            f.write(ex.dot())
    if args.svg and not ex.svg(args.svg):
        print("note: Graphviz `dot` is not installed; no SVG written", file=sys.stderr)


# -- reading the graph -----------------------------------------------------------------------
def read_graph(path: str, tags=()):
    """The GraphDef proto in `path`: a GraphDef, MetaGraphDef or SavedModel (see module doc).

    Raises: UsageError when `path` is missing or none of these.
    """
    if os.path.isdir(path) or os.path.basename(path) in ("saved_model.pb", "saved_model.pbtxt"):
        return _saved_model_graph(path, tags)
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}", f"give {_FORMATS}")
    readers = [_as_graph_def, _as_meta_graph_def]
    if path.endswith(".meta"):
        readers.reverse()
    for read in readers:
        try:
            graph_def = read(path)
        except ValueError:
            continue
        if _plausible(graph_def):
            return graph_def
    raise UsageError(f"{path} is not {_FORMATS}, or has no nodes",
                     "write one with tf.train.write_graph or tf.train.export_meta_graph")


def _as_graph_def(path: str):
    from tensorweave.training.graph_io import read_graph_def

    return read_graph_def(path)


def _as_meta_graph_def(path: str):
    from tensorweave.training.meta_graph import read_meta_graph_file

    return read_meta_graph_file(path).graph_def


def _plausible(graph_def) -> bool:
    # NOTE: protobuf's binary decoding is lenient: one message's bytes can decode as another
    # kind; a real graph has nodes, each with a name and an op.
    return len(graph_def.node) > 0 and all(n.name and n.op for n in graph_def.node)


def _saved_model_graph(path: str, tags):
    """The GraphDef of the MetaGraphDef tagged `tags` (default: serve) in a SavedModel."""
    directory = path if os.path.isdir(path) else os.path.dirname(path) or "."
    pb = os.path.join(directory, "saved_model.pb")
    if not os.path.exists(pb):
        raise UsageError(f"{path} is a directory without saved_model.pb", f"give {_FORMATS}")
    try:
        saved_model_pb2 = importlib.import_module("tensorweave.proto.saved_model_pb2")
    except ImportError:
        raise UsageError(f"{path} is a SavedModel, which tensorweave cannot read yet",
                         "export its graph with tf.train.export_meta_graph and explain the "
                         ".meta file") from None
    with open(pb, "rb") as f:
        model = saved_model_pb2.SavedModel.FromString(f.read())
    wanted = set(tags or ["serve"])
    found = [list(m.meta_info_def.tags) for m in model.meta_graphs]
    for meta, have in zip(model.meta_graphs, found):
        if set(have) == wanted or (not tags and len(found) == 1):
            return meta.graph_def
    raise UsageError(f"{path} has no MetaGraphDef tagged {sorted(wanted)} (it has {found})",
                     "pick one with --tag")


def _import(graph_def, path: str):
    import tensorweave as tf

    graph = tf.Graph()
    with graph.as_default():
        try:
            tf.import_graph_def(graph_def, name="")
        except (ValueError, tf.errors.OpError) as e:
            why = getattr(e, "message", None) or str(e)
            raise UsageError(f"cannot import the graph in {path}: {why.splitlines()[0]}",
                             "explain reads graphs of the ops tensorweave registers") from None
    return graph


# -- checking names -------------------------------------------------------------------------
def _check_passes(names) -> None:
    from tensorweave.master.passes import pass_names

    known = pass_names()
    for name in names:
        if name not in known:
            raise UsageError(f"--disable {name}: no such pass",
                             f"passes: {', '.join(known)}")


def _existing(graph, name: str, flag: str) -> str:
    """`name` when it is an op or one of its outputs in `graph`; else UsageError."""
    op_name, _, port = name.partition(":")
    ops = {op.name: op for op in graph.get_operations()}
    op = ops.get(op_name)
    if op is not None and (not port or (port.isdigit() and int(port) < len(op.outputs))):
        return name
    if op is not None:
        raise UsageError(f"{flag} {name}: {op_name} ({op.type}) has {len(op.outputs)} "
                         f"output(s)", f"use {op_name}:0" if op.outputs else "fetch the op")
    near = difflib.get_close_matches(op_name, list(ops), n=3, cutoff=0.6)
    hint = (f"closest: {', '.join(near)}" if near else
            f"its last ops are {', '.join(list(ops)[-3:])}" if ops else "the graph is empty")
    raise UsageError(f"{flag} {name}: no op named {op_name!r} in the graph", hint)
