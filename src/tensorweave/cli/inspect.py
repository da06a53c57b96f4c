"""`tensorweave inspect CKPT [--tensor NAME] [--all] [--full]`: a checkpoint's variables.

Prints one line per tensor as TensorFlow's inspect_checkpoint does (`name (DT_FLOAT) [64,32]`)
and a summary; `--tensor NAME` (repeatable) or `--all` print values. CKPT is a prefix, one of
its files (`.index`, `.data-…`, `.meta`) or a directory with a `checkpoint` state file.
A checkpoint that is not there and a tensor not in it are usage errors (exit status 2); one
that cannot be read (a truncated or corrupt file) exits 1; either with one line on stderr.
"""

from __future__ import annotations

import argparse
import difflib
import sys

import numpy as np

from tensorweave import errors
from tensorweave.cli.main import UsageError, command


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkpoint", help="checkpoint prefix, one of its files, or a directory")
    p.add_argument("--tensor", action="append", default=[], metavar="NAME",
                   help="print this tensor's value (repeatable)")
    p.add_argument("--all", action="store_true", help="print every tensor's value")
    p.add_argument("--full", action="store_true", help="print arrays in full (no '...')")


def _summary(reader) -> str:
    from tensorweave.formats.checkpoint.bundle import storage_dtype

    shapes, dts = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    total = 0
    for name, shape in shapes.items():
        try:
            total += int(np.prod(shape, dtype=np.int64)) * storage_dtype(dts[name]).itemsize
        except errors.OpError:
            continue  # NOTE: strings have no fixed size
    return f"# {reader.prefix}: {len(shapes)} tensors, {total:,} bytes of fixed-size data"


def _check_names(reader, names) -> None:
    known = reader.get_variable_to_shape_map()
    for name in names:
        if not reader.has_tensor(name):
            near = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
            hint = f"closest: {', '.join(near)}" if near else "list them without --tensor"
            raise UsageError(f"tensor {name!r} is not in {reader.prefix}", hint)


def _print_tensor(reader, name: str) -> None:
    value = reader.get_tensor(name)
    print(f"tensor_name:  {name}")
    print(value)


@command("inspect", "list a checkpoint's variables, shapes and dtypes, or print tensors")(_args)
def _inspect(args) -> int:
    from tensorweave.training.checkpoint_utils import load_checkpoint

    try:
        reader = load_checkpoint(args.checkpoint)
    except errors.NotFoundError:
        raise UsageError(f"no checkpoint at {args.checkpoint}", "give a prefix, one of its "
                         "files, or a directory with a `checkpoint` file") from None
    except (errors.OpError, ValueError) as e:
        raise errors.DataLossError(None, None, f"cannot read checkpoint {args.checkpoint}: "
                                   f"{getattr(e, 'message', e)}") from None
    names = sorted(reader.get_variable_to_shape_map()) if args.all else args.tensor
    _check_names(reader, names)
    with np.printoptions(threshold=sys.maxsize if args.full else 1000):
        if not names:
            sys.stdout.write(reader.debug_string().decode())
            print(_summary(reader))
        for name in names:
            _print_tensor(reader, name)
    return 0
