"""Reading checkpoints from Python and initializing variables from them (TF1's
`tf.train.load_checkpoint`, `NewCheckpointReader`, `list_variables`, `load_variable`,
`init_from_checkpoint`), plus the state-file helpers (`latest_checkpoint`, ...).

`init_from_checkpoint` follows TF's assignment-map rules:

* `{"ckpt/name": var_or_name}`: one tensor into one variable (a Variable, or the name of a
  variable from `get_variable`; tensorweave also finds variables made by `tf.Variable`);
* `{"ckpt_scope/": "scope/"}`: every variable under `scope/` from the tensor with the same
  name under `ckpt_scope/`;
* `{"/": "scope/"}` and `{"ckpt_scope/": "/"}`: the root on either side.

It replaces each variable's initializer by an `Assign` from a `RestoreV2` op (named
`checkpoint_initializer`), so the values are read when the initializers run. Every missing
tensor is reported in one error (with the closest names the checkpoint holds), and every shape
or dtype mismatch names both sides.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

from tensorweave import dtypes
from tensorweave.formats.checkpoint.bundle import BundleReader
from tensorweave.formats.checkpoint.state import (  # noqa: F401  (re-exported)
    CheckpointState,
    checkpoint_exists,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    meta_graph_filename,
    remove_checkpoint,
    update_checkpoint_state,
)
from tensorweave.framework.graph import GraphKeys, get_collection, get_default_graph
from tensorweave.ops import io_ops
from tensorweave.runtime.kernels.cpu import io as _io_kernels  # noqa: F401  (RestoreV2 kernel)
from tensorweave.shapes import TensorShape

_TF_TYPE_NAMES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}


class CheckpointReader:
    """Reads tensors of a V2 checkpoint (TF's `CheckpointReader`, from `NewCheckpointReader`).

    Raises (constructor):
      NotFoundError: no checkpoint at the prefix.
      DataLossError: a truncated or corrupt index file (named).
    """

    def __init__(self, filepattern):
        self._reader = BundleReader(filepattern)

    def get_tensor(self, tensor_str):
        """The tensor's value: an array, or a numpy scalar (bytes for strings) for rank 0.

        Raises:
          NotFoundError: the checkpoint has no such tensor.
          DataLossError: its bytes are truncated or fail their checksum.
        """
        value = self._reader.get_tensor(_text(tensor_str))
        return value[()] if value.ndim == 0 else value

    def has_tensor(self, tensor_str) -> bool:
        return _text(tensor_str) in self._reader

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {n: self._reader.shape(n) for n in self._reader.names()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        return {n: self._reader.dtype(n) for n in self._reader.names()}

    def debug_string(self) -> bytes:
        """One line per tensor, `name (DT_FLOAT) [64,32]`, as TensorFlow prints them."""
        lines = []
        for n in self._reader.names():
            shape = ",".join(str(d) for d in self._reader.shape(n))
            lines.append(f"{n} ({dt_name(self._reader.dtype(n))}) [{shape}]\n")
        return "".join(lines).encode()

    @property
    def prefix(self) -> str:
        return self._reader.prefix

    def close(self) -> None:
        self._reader.close()


def dt_name(dtype: dtypes.DType) -> str:
    """TensorFlow's enum name: float32 → DT_FLOAT."""
    return "DT_" + _TF_TYPE_NAMES.get(dtype.name, dtype.name.upper())


def _text(s) -> str:
    return s.decode() if isinstance(s, bytes) else str(s)


def NewCheckpointReader(filepattern) -> CheckpointReader:  # noqa: N802 - TF's name
    """A CheckpointReader for checkpoint prefix `filepattern` (a `.index`/`.data-…` path
    is accepted)."""
    return CheckpointReader(filepattern)


def _get_checkpoint_filename(ckpt_dir_or_file) -> str:
    """The prefix of a checkpoint, or of the newest one in a directory.

    Raises:
      ValueError: a directory without a (valid) `checkpoint` state file.
    """
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {path}")
        return latest
    return path


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A CheckpointReader for a checkpoint prefix, or the newest checkpoint of a directory.

    Raises:
      ValueError: a directory with no checkpoint.
      NotFoundError / DataLossError: see `CheckpointReader`.
    """
    return CheckpointReader(_get_checkpoint_filename(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name):
    """The value of tensor `name` (a trailing `:0` is dropped)."""
    name = _text(name)
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list[tuple[str, list[int]]]:
    """Sorted (name, shape) of every tensor in the checkpoint."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted(reader.get_variable_to_shape_map().items())


# -- init_from_checkpoint --------------------------------------------------------------------
def _is_variable(x) -> bool:
    return (hasattr(x, "_ref") and hasattr(x, "initializer")) or _is_partitioned(x)


def _is_partitioned(x) -> bool:
    return hasattr(x, "_get_variable_list")


def _var_name(v) -> str:
    return v.name if _is_partitioned(v) else v.op.name


def _known_variables() -> dict:
    """Variables by name: those of `get_variable`'s store, then every global variable; a
    partitioned variable by its name instead of its parts'."""
    from tensorweave.ops.variable_scope import stored_partitioned_variables, stored_variables

    found = {v.op.name: v for v in get_collection(GraphKeys.GLOBAL_VARIABLES)}
    found.update(stored_variables())
    for name, pv in stored_partitioned_variables().items():
        for part in pv:
            found.pop(part.op.name, None)
        found[name] = pv
    return found


def _scope_pairs(ckpt_scope: str, current: str, known: dict) -> list[tuple[str, str]]:
    """(tensor name, variable name) for a `"ckpt_scope/": "scope/"` entry (TF's rules)."""
    scopes = current[:current.rindex("/")] if "/" in current else ""
    if not ckpt_scope.endswith("/"):
        raise ValueError(f"Assignment map with scope only name {scopes} should map to scope "
                         f"only {ckpt_scope}. Should be 'scope/': 'other_scope/'.")
    names = sorted({n for n in known if not scopes or n.startswith(scopes + "/")})
    pairs = []
    for var_name in names:
        full = var_name[len(scopes):]
        if current != "/":
            full = full[1:]
        if ckpt_scope != "/":
            full = ckpt_scope + full
        pairs.append((full[:-1] if full.endswith("/") else full, var_name))
    return pairs


def _resolve(assignment_map, known: dict) -> list[tuple[str, object]]:
    """(tensor name, Variable) pairs of an assignment map, in TF's order."""
    items = assignment_map.items() if isinstance(assignment_map, Mapping) else assignment_map
    pairs = []
    for tensor_name, current in sorted(items, key=lambda p: p[0]):
        if isinstance(current, (list, tuple)):
            current = _parts_as_partitioned(current, tensor_name)
        if _is_variable(current):
            pairs.append((tensor_name, current))
        elif current in known:
            pairs.append((tensor_name, known[current]))
        else:
            pairs += [(t, known[v]) for t, v in _scope_pairs(tensor_name, current, known)]
    return pairs


def _parts_as_partitioned(parts, tensor_name):
    """A list of the parts of one partitioned variable, as a PartitionedVariable.

    Raises: ValueError when they are not all parts of the same variable."""
    from tensorweave.ops.partitioned_variables import PartitionedVariable

    infos = [p._get_save_slice_info() if hasattr(p, "_get_save_slice_info") else None
             for p in parts]
    if not parts or None in infos or len({i.full_name for i in infos}) != 1:
        raise ValueError(f"Slices must all be from the same tensor: entry {tensor_name!r} "
                         "lists variables that are not the parts of one partitioned variable")
    return PartitionedVariable(infos[0].full_name, infos[0].full_shape,
                               parts[0].dtype.base_dtype, list(parts), [])


def check_pairs(pairs, shapes: dict, dts: dict, where: str) -> None:
    """Raises ValueError listing every missing tensor (with close names) or every shape and
    dtype mismatch between a variable and its tensor."""
    missing = [(t, v) for t, v in pairs if t not in shapes]
    if missing:
        lines = [f"  {t} (for variable {_var_name(v)}){_closest(t, list(shapes))}"
                 for t, v in missing]
        raise ValueError(f"{len(missing)} tensor(s) not found in checkpoint {where}:\n" +
                         "\n".join(lines))
    problems = []
    for t, v in pairs:
        if not v.get_shape().is_compatible_with(TensorShape(shapes[t])):
            problems.append(f"  variable {_var_name(v)}: shape {v.get_shape().as_list()}; tensor "
                            f"{t} in {where}: shape {list(shapes[t])}")
        if v.dtype.base_dtype != dts[t]:
            problems.append(f"  variable {_var_name(v)}: dtype {v.dtype.base_dtype.name}; tensor "
                            f"{t} in {where}: dtype {dts[t].name}")
    if problems:
        raise ValueError("Variables do not match the checkpoint:\n" + "\n".join(problems))


def _closest(name: str, available: list[str]) -> str:
    near = difflib.get_close_matches(name, available, n=3, cutoff=0.5)
    return f" (closest: {', '.join(near)})" if near else ""


def _set_variable_or_parts_initializer(variable, ckpt_file: str, tensor_name: str) -> None:
    """As `_set_checkpoint_initializer`; each part of a partitioned variable reads its slice."""
    if not _is_partitioned(variable):
        _set_checkpoint_initializer(variable, ckpt_file, tensor_name)
        return
    for part in variable:
        _set_checkpoint_initializer(part, ckpt_file, tensor_name,
                                    spec=part._get_save_slice_info().spec)


def _set_checkpoint_initializer(variable, ckpt_file: str, tensor_name: str,
                                name: str = "checkpoint_initializer", spec: str = "") -> None:
    """Makes the variable's initializer assign `tensor_name` (its slice `spec` when given)
    read from `ckpt_file`."""
    from tensorweave.ops import state_ops

    g = get_default_graph()
    with g.device(variable.device), g.device("/cpu:0"):
        restored = io_ops.restore_v2(ckpt_file, [tensor_name], [spec],
                                     [variable.dtype.base_dtype], name=name)[0]
    init = state_ops.assign(variable._ref(), restored,
                            validate_shape=variable.get_shape().is_fully_defined())
    restored.set_shape(variable.get_shape())
    variable._initializer_op = init.op
    variable._initial_value = restored


def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    """Initializes variables from a checkpoint instead of their initializers (TF1
    `tf.train.init_from_checkpoint`; rules in the module docstring).

    Call it after building the variables and before `global_variables_initializer()`.

    Raises:
      ValueError: a directory without checkpoints, a malformed scope entry, tensors missing
        from the checkpoint (all listed), or shape/dtype mismatches (both sides named).
      NotFoundError / DataLossError: an unreadable checkpoint.
    """
    ckpt_file = _get_checkpoint_filename(ckpt_dir_or_file)
    reader = CheckpointReader(ckpt_file)
    pairs = _resolve(assignment_map, _known_variables())
    where = os.fspath(ckpt_dir_or_file)
    check_pairs(pairs, reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map(),
                where)
    reader.close()
    for tensor_name, var in pairs:
        _set_variable_or_parts_initializer(var, ckpt_file, tensor_name)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None,
                         timeout_fn=None):
    """Yields each new latest checkpoint of `checkpoint_dir` as it appears (TF1's), stopping
    after `timeout` seconds without one (unless `timeout_fn()` says to keep waiting)."""
    import time

    checkpoint_path = None
    while True:
        new = _wait_for_new(checkpoint_dir, checkpoint_path, timeout)
        if new is None:
            if not timeout_fn or timeout_fn():
                return
            continue
        start = time.time()
        checkpoint_path = new
        yield checkpoint_path
        time.sleep(max(0.0, start + min_interval_secs - time.time()))


def _wait_for_new(checkpoint_dir, last, timeout, seconds_to_sleep=0.1):
    import time

    stop = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last:
            return path
        if stop is not None and time.time() + seconds_to_sleep > stop:
            return None
        time.sleep(seconds_to_sleep)


__all__ = [
    "CheckpointReader", "NewCheckpointReader", "load_checkpoint", "load_variable",
    "list_variables", "init_from_checkpoint", "checkpoints_iterator", "latest_checkpoint",
    "get_checkpoint_state", "checkpoint_exists", "update_checkpoint_state",
    "generate_checkpoint_state_proto", "get_checkpoint_mtimes", "remove_checkpoint",
    "meta_graph_filename", "CheckpointState",
]
