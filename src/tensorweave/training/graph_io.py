"""Writing and reading GraphDef files: `tf.train.write_graph` / `tf.io.write_graph`, and
`read_graph_def` for either of the two forms it writes (binary or protobuf text format).

Files are interchangeable with TensorFlow: a binary file is the serialized GraphDef, a text
file is `text_format` of it (our messages carry TF's field names and numbers).
"""

from __future__ import annotations

import os
import tempfile

from google.protobuf import message, text_format

from tensorweave import ir
from tensorweave.proto import convert, graph_pb2

_TEXT_SUFFIXES = (".pbtxt", ".pbtext", ".txt", ".prototxt")


def write_graph(graph_or_graph_def, logdir, name, as_text: bool = True) -> str:
    """Writes a graph to `logdir/name` atomically and returns that path.

    Args:
      graph_or_graph_def: a `Graph`, a GraphDef proto, or an `ir.GraphDef`.
      logdir: the directory; created (with parents) when missing.
      name: the file name inside `logdir`.
      as_text: protobuf text format (TF's default) rather than binary.

    Raises:
      TypeError: `graph_or_graph_def` is none of the above.
      OSError: the directory or file cannot be written (nothing is left half-written).
    """
    graph_def = _as_proto(graph_or_graph_def)
    logdir = os.fspath(logdir)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, os.fspath(name))
    if as_text:
        data = text_format.MessageToString(graph_def).encode("utf-8")
    else:
        data = graph_def.SerializeToString(deterministic=True)
    _atomic_write(path, data)
    return path


def read_graph_def(path) -> graph_pb2.GraphDef:
    """The GraphDef stored at `path`, binary or text format.

    Files named `*.pbtxt`/`*.pbtext`/`*.txt`/`*.prototxt` are read as text first, others as
    binary first; the other form is tried when the first fails.

    Raises:
      OSError: the file cannot be read.
      ValueError: the file is neither a binary nor a text GraphDef.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    readers = [_from_binary, _from_text]
    if path.lower().endswith(_TEXT_SUFFIXES):
        readers.reverse()
    errors = []
    for read in readers:
        try:
            return read(data)
        except (message.DecodeError, text_format.ParseError, UnicodeDecodeError) as e:
            errors.append(f"{read.__doc__}: {e}")
    raise ValueError(f"{path} is not a GraphDef file ({'; '.join(errors)})")


def _from_binary(data: bytes) -> graph_pb2.GraphDef:
    """as binary"""
    return graph_pb2.GraphDef.FromString(data)


def _from_text(data: bytes) -> graph_pb2.GraphDef:
    """as text"""
    return text_format.Parse(data.decode("utf-8"), graph_pb2.GraphDef())


def _as_proto(graph_or_graph_def) -> graph_pb2.GraphDef:
    if isinstance(graph_or_graph_def, graph_pb2.GraphDef):
        return graph_or_graph_def
    if isinstance(graph_or_graph_def, ir.GraphDef):
        return convert.graph_to_proto(graph_or_graph_def)
    if hasattr(graph_or_graph_def, "as_graph_def"):
        return graph_or_graph_def.as_graph_def()
    raise TypeError(f"Expected a Graph or a GraphDef, got {type(graph_or_graph_def).__name__}")


def _atomic_write(path: str, data: bytes) -> None:
    """Writes `data` to a temporary file next to `path`, then renames it over `path`."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # NOTE: mkstemp makes it private; a written graph is not secret
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


__all__ = ["write_graph", "read_graph_def"]
