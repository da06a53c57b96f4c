"""The `checkpoint` state file of a checkpoint directory (TF's checkpoint_management).

The file is a `CheckpointState` in protobuf text format::

    model_checkpoint_path: "model.ckpt-2000"
    all_model_checkpoint_paths: "model.ckpt-1000"
    all_model_checkpoint_paths: "model.ckpt-2000"

Paths are relative to the directory when written relative (`save_relative_paths`, or when the
directory itself is given relative); readers join relative paths onto the directory. The file
is always replaced atomically (temporary file, then rename).
"""

from __future__ import annotations

import glob
import logging
import os
import re
import tempfile

from google.protobuf import text_format

from tensorweave.formats.checkpoint.bundle import index_filename, normalize_prefix
from tensorweave.proto.checkpoint_state_pb2 import CheckpointState

_LOG = logging.getLogger("tensorweave")
LATEST_FILENAME = "checkpoint"


def _state_path(checkpoint_dir, latest_filename) -> str:
    return os.path.join(os.fspath(checkpoint_dir), latest_filename or LATEST_FILENAME)


def atomic_write_string_to_file(path: str, contents: str) -> None:
    """Writes `contents` to a temporary file beside `path`, then renames it over `path`."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(contents)
        os.chmod(tmp, 0o644)  # NOTE: mkstemp makes it private; the state file is not secret
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None) -> CheckpointState:
    """A CheckpointState; `model_checkpoint_path` is appended to the list when not last.

    With a relative `save_dir`, relative paths are rewritten relative to it (TF's rule).

    Raises:
      ValueError: the timestamps do not pair up with the paths.
    """
    save_dir = os.fspath(save_dir)
    paths = [os.fspath(p) for p in (all_model_checkpoint_paths or [])]
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    stamps = list(all_model_checkpoint_timestamps or [])
    if stamps and len(stamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths "
                         f"({len(stamps)} vs {len(paths)})")
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointState(model_checkpoint_path=model_checkpoint_path,
                           all_model_checkpoint_paths=paths,
                           all_model_checkpoint_timestamps=stamps,
                           last_preserved_timestamp=last_preserved_timestamp or 0.0)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None,
                            save_relative_paths: bool = False) -> None:
    """Writes the state file of `save_dir` atomically.

    Args:
      save_relative_paths: store paths relative to `save_dir` (portable when the directory
        moves) instead of as given.

    Raises:
      RuntimeError: the checkpoint path would be the state file itself.
      ValueError: see `generate_checkpoint_state_proto`.
    """
    save_dir = os.fspath(save_dir)
    model_checkpoint_path = os.fspath(model_checkpoint_path)
    paths = [os.fspath(p) for p in (all_model_checkpoint_paths or [])]
    if save_relative_paths:
        model_checkpoint_path = _relative_to(model_checkpoint_path, save_dir)
        paths = [_relative_to(p, save_dir) for p in paths]
    ckpt = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, paths,
                                           all_model_checkpoint_timestamps,
                                           last_preserved_timestamp)
    state_path = _state_path(save_dir, latest_filename)
    if state_path == ckpt.model_checkpoint_path:
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used for "
                           "checkpoint state.  Please use a different save path.")
    atomic_write_string_to_file(state_path, text_format.MessageToString(ckpt))


def _relative_to(path: str, directory: str) -> str:
    return os.path.relpath(path, directory) if os.path.isabs(path) else path


def get_checkpoint_state(checkpoint_dir, latest_filename=None) -> CheckpointState | None:
    """The directory's CheckpointState with relative paths joined onto `checkpoint_dir`;
    None when there is no state file, or it cannot be parsed (logged)."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, encoding="utf-8") as f:
            content = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        _LOG.warning("%s: %s; checkpoint ignored", path, e)
        return None
    try:
        ckpt = text_format.Parse(content, CheckpointState())
    except text_format.ParseError as e:
        _LOG.warning("%s: %s; checkpoint ignored", path, e)
        return None
    if not ckpt.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(ckpt.model_checkpoint_path):
        ckpt.model_checkpoint_path = os.path.join(checkpoint_dir, ckpt.model_checkpoint_path)
    for i, p in enumerate(ckpt.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            ckpt.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, p)
    return ckpt


def latest_checkpoint(checkpoint_dir, latest_filename=None) -> str | None:
    """The prefix of the newest checkpoint named by the state file, when its files exist."""
    ckpt = get_checkpoint_state(checkpoint_dir, latest_filename)
    if ckpt and ckpt.model_checkpoint_path:
        if checkpoint_exists(ckpt.model_checkpoint_path):
            return ckpt.model_checkpoint_path
        _LOG.error("Couldn't match files for checkpoint %s", ckpt.model_checkpoint_path)
    return None


def checkpoint_exists(checkpoint_prefix) -> bool:
    """Whether a V2 checkpoint exists at the prefix (a `.index`/`.data-…` path is accepted)."""
    return os.path.isfile(index_filename(normalize_prefix(checkpoint_prefix)))


def get_checkpoint_mtimes(checkpoint_prefixes) -> list[float]:
    """Modification times of the checkpoints' index files; missing checkpoints are skipped."""
    out = []
    for p in checkpoint_prefixes:
        try:
            out.append(os.path.getmtime(index_filename(normalize_prefix(p))))
        except OSError:
            continue
    return out


def meta_graph_filename(checkpoint_filename, meta_graph_suffix: str = "meta") -> str:
    """`model.ckpt-123` → `model.ckpt-123.meta` (a sharded-spec suffix is dropped)."""
    base = re.sub(r"-[\d\?]+-of-\d+$", "", os.fspath(checkpoint_filename))
    return f"{base}.{meta_graph_suffix}"


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=2,
                      meta_graph_suffix: str = "meta") -> None:
    """Deletes a checkpoint's meta graph, index and data files (missing ones are ignored)."""
    del checkpoint_format_version  # NOTE: only V2 is written
    prefix = normalize_prefix(checkpoint_prefix)
    paths = [meta_graph_filename(prefix, meta_graph_suffix), index_filename(prefix)]
    paths += glob.glob(glob.escape(prefix) + ".data-?????-of-?????")
    for p in paths:
        try:
            os.remove(p)
        except FileNotFoundError:
            pass


__all__ = [
    "CheckpointState", "generate_checkpoint_state_proto", "update_checkpoint_state",
    "get_checkpoint_state", "latest_checkpoint", "checkpoint_exists", "get_checkpoint_mtimes",
    "meta_graph_filename", "remove_checkpoint", "atomic_write_string_to_file",
]
