"""`tensorweave ops [--format pbtxt|json] [--output FILE] [--no-internal]`: the OpList (every
registered OpDef, TF's op_def.proto) for generating op wrappers in other languages."""

from __future__ import annotations

import sys

from tensorweave.cli.main import command


def _args(p) -> None:
    p.add_argument("--format", choices=["pbtxt", "json"], default="pbtxt")
    p.add_argument("--output", help="file to write (default: stdout)")
    p.add_argument("--no-internal", action="store_true", help="leave out `_`-prefixed ops")


@command("ops", "print every OpDef (an OpList, as pbtxt or JSON)")(_args)
def _ops(args) -> int:
    import tensorweave  # noqa: F401  (registers every op type)
    from tensorweave.tools.op_list import op_list, to_text

    text = to_text(op_list(include_internal=not args.no_internal), args.format)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0
