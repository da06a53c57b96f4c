"""`tensorweave <command>`: one entry per subcommand in `COMMANDS`.

    tensorweave explain GRAPH.pb --fetch probs:0 --feed x:0 [--devices 2] [--dot F] [--svg F]
    tensorweave inspect CKPT [--tensor NAME]
    tensorweave server [--cluster JSON --job NAME --task I]
    tensorweave cluster --ps N --workers M
"""

from __future__ import annotations

import argparse
import sys

COMMANDS: dict[str, tuple] = {}


def command(name: str, help_text: str):
    """Registers `fn(args)` with `configure(parser)` as a subcommand."""

    def wrap(configure):
        def deco(fn):
            COMMANDS[name] = (help_text, configure, fn)
            return fn
        return deco

    return wrap


def _explain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("graph", help="a GraphDef file (.pb binary or .pbtxt text)")
    p.add_argument("--fetch", action="append", required=True, help="tensor or op to fetch")
    p.add_argument("--feed", action="append", default=[], help="tensor that is fed")
    p.add_argument("--devices", type=int, default=1, help="number of CPU devices")
    p.add_argument("--disable", action="append", default=[], help="switch a pass off")
    p.add_argument("--dot", help="write the partitioned stage as Graphviz DOT here")
    p.add_argument("--svg", help="render the partitioned stage to SVG (needs Graphviz)")
    p.add_argument("--counts", action="store_true", help="only print node counts per stage")


@command("explain", "show a fetch's graph at every stage of the master")(_explain_args)
def _explain(args) -> int:
    import tensorweave as tf
    from tensorweave.master.explain import explain
    from tensorweave.training.graph_io import read_graph_def

    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(read_graph_def(args.graph), name="")
    cfg = {"device_count": {"CPU": args.devices}, "disabled_passes": args.disable}
    ex = explain(args.fetch, {f: None for f in args.feed}, graph=g, config=cfg)
    if args.counts:
        for name, n in ex.counts().items():
            print(f"{name:28s} {n:6d}")
    else:
        sys.stdout.write(ex.text())
    if args.dot:
        with open(args.dot, "w") as f:
            f.write(ex.dot())
    if args.svg and not ex.svg(args.svg):
        print("note: Graphviz `dot` is not installed; no SVG written", file=sys.stderr)
    return 0


def _load_commands() -> None:
    """Subcommands that live in their own modules register themselves on import."""
    from tensorweave.cli import cluster, inspect, server  # noqa: F401


def main(argv=None) -> int:
    _load_commands()
    parser = argparse.ArgumentParser(prog="tensorweave")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, configure, _) in sorted(COMMANDS.items()):
        configure(sub.add_parser(name, help=help_text))
    args = parser.parse_args(argv)
    return COMMANDS[args.command][2](args)


if __name__ == "__main__":
    # NOTE: run as `python -m`, this file is `__main__`; subcommands register with the
    # importable module, so dispatch through it.
    from tensorweave.cli.main import main as _main

    sys.exit(_main())
