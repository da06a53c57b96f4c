"""`tensorweave <command>`: one entry per subcommand in `COMMANDS`.

    tensorweave explain GRAPH --fetch probs:0 --feed x:0 [--devices 2] [--full] [--dot F]
    tensorweave inspect CKPT [--tensor NAME]
    tensorweave server [--cluster JSON --job NAME --task I]
    tensorweave cluster --ps N --workers M
    tensorweave ops [--format pbtxt|json]
    tensorweave freeze --output_node_names OUT --output_graph F.pb (--input_saved_model_dir D | ...)
    tensorweave serve --model_name NAME --model_base_path DIR [--port P --rest_api_port R]

Errors: a command raises `UsageError` for a mistake in how it was called (a bad flag value, a
file that is not there, a name not in the graph); `main` prints it as one line on stderr —
what is wrong, then what to do — and returns 2, as argparse does for its own errors, which
take the same path. `OSError` and `tf.errors.OpError` that escape a command (the work itself
failed: a corrupt file, a failing step) print as `error: ...` without a traceback and return 1.
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys

COMMANDS: dict[str, tuple] = {}


class UsageError(Exception):
    """The command was called wrongly: `what` is wrong, `hint` says what to do instead."""

    def __init__(self, what: str, hint: str = "", prog: str | None = None):
        super().__init__(what)
        self.what, self.hint, self.prog = what, hint, prog

    def line(self) -> str:
        return f"{self.what}; {self.hint}" if self.hint else self.what


class _Parser(argparse.ArgumentParser):
    """argparse whose errors become `UsageError` (one line, not usage plus a message)."""

    def error(self, message: str):
        raise UsageError(message, f"see `{self.prog} --help`", prog=self.prog)


def at_least(minimum: int):
    """An argparse `type` for a whole number >= `minimum` (its errors are usage errors)."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, not {value}")
        return value

    return whole_number


def command(name: str, help_text: str):
    """Registers `fn(args)` with `configure(parser)` as a subcommand."""

    def wrap(configure):
        def deco(fn):
            COMMANDS[name] = (help_text, configure, fn)
            return fn
        return deco

    return wrap


def _load_commands() -> None:
    """Subcommands live in their own modules and register themselves on import."""
    from tensorweave.cli import cluster, explain, freeze, inspect, ops, serve, server  # noqa: F401


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tensorweave")
    except metadata.PackageNotFoundError:
        from tensorweave import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    _load_commands()
    parser = _Parser(prog="tensorweave",
                     description="Tools for tensorweave graphs, checkpoints and clusters.")
    parser.add_argument("--version", action="version", version=f"tensorweave {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands")
    for name, (help_text, configure, _) in sorted(COMMANDS.items()):
        configure(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv=None) -> int:
    """Runs one command; its exit status (0 done, 1 the work failed, 2 a usage error)."""
    prog = "tensorweave"
    try:
        from tensorweave import errors

        args = build_parser().parse_args(argv)
        prog = f"tensorweave {args.command}"
        return COMMANDS[args.command][2](args)
    except UsageError as e:
        print(f"{e.prog or prog}: error: {e.line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130   # NOTE: Ctrl-C before a command took charge of it (128 + SIGINT)
    except (OSError, errors.OpError) as e:
        message = getattr(e, "message", None) or str(e)
        print(f"{prog}: error: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # NOTE: run as `python -m`, this file is `__main__`; subcommands register with the
    # importable module, so dispatch through it.
    from tensorweave.cli.main import main as _main

    sys.exit(_main())
