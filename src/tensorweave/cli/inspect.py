"""`tensorweave inspect CKPT [--tensor NAME] [--all] [--full]`: a checkpoint's variables.

Prints one line per tensor as TensorFlow's inspect_checkpoint does (`name (DT_FLOAT) [64,32]`)
and a summary; `--tensor NAME` (repeatable) or `--all` print values. CKPT is a prefix, one of
its files (`.index`, `.data-…`, `.meta`) or a directory with a `checkpoint` state file.
Exit status 1 with a message on stderr when the checkpoint or a tensor cannot be read.
"""

from __future__ import annotations

import argparse
import difflib
import sys

import numpy as np

from tensorweave import errors
from tensorweave.cli.main import command


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkpoint", help="checkpoint prefix, one of its files, or a directory")
    p.add_argument("--tensor", action="append", default=[], metavar="NAME",
                   help="print this tensor's value (repeatable)")
    p.add_argument("--all", action="store_true", help="print every tensor's value")
    p.add_argument("--full", action="store_true", help="print arrays in full (no '...')")


def _summary(reader) -> str:
    from tensorweave.training.checkpoint.bundle import storage_dtype

    shapes, dts = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    total = 0
    for name, shape in shapes.items():
        try:
            total += int(np.prod(shape, dtype=np.int64)) * storage_dtype(dts[name]).itemsize
        except errors.OpError:
            continue  # NOTE: strings have no fixed size
    return f"# {reader.prefix}: {len(shapes)} tensors, {total:,} bytes of fixed-size data"


def _print_tensor(reader, name: str) -> bool:
    if not reader.has_tensor(name):
        names = list(reader.get_variable_to_shape_map())
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f" (closest: {', '.join(near)})" if near else ""
        print(f"error: tensor {name!r} is not in {reader.prefix}{hint}", file=sys.stderr)
        return False
    value = reader.get_tensor(name)
    print(f"tensor_name:  {name}")
    print(value)
    return True


@command("inspect", "list a checkpoint's variables, shapes and dtypes, or print tensors")(_args)
def _inspect(args) -> int:
    from tensorweave.training.checkpoint_utils import load_checkpoint

    try:
        reader = load_checkpoint(args.checkpoint)
    except (errors.OpError, ValueError, OSError) as e:
        print(f"error: cannot read checkpoint {args.checkpoint}: {getattr(e, 'message', e)}",
              file=sys.stderr)
        return 1
    names = sorted(reader.get_variable_to_shape_map()) if args.all else args.tensor
    ok = True
    with np.printoptions(threshold=sys.maxsize if args.full else 1000):
        try:
            if not names:
                sys.stdout.write(reader.debug_string().decode())
                print(_summary(reader))
            for name in names:
                ok = _print_tensor(reader, name) and ok
        except errors.OpError as e:
            print(f"error: {getattr(e, 'message', e)}", file=sys.stderr)
            return 1
    return 0 if ok else 1
