"""`tf.app` (TF1's platform/app.py): `run(main=None, argv=None)` is absl's `app.run` with
TF's flag parsing: known flags are parsed (`--help`, bad values and validators as absl does,
exit code 1 on an error), unknown ones are left in the argv given to `main`."""

from __future__ import annotations

import sys as _sys

from absl import app as _absl_app

from tensorweave import flags


def _parse_flags_tolerate_undef(argv):
    return flags.FLAGS(_sys.argv if argv is None else argv, known_only=True)


def run(main=None, argv=None):
    """Parses flags, then calls `main(remaining_argv)` (default: `__main__.main`) and exits
    with its return value."""
    main = main or _sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)


__all__ = ["flags", "run"]
