"""`tf.train.Saver` (TF1): saves and restores variables as TensorFlow V2 checkpoints.

A Saver adds a `save` name scope to the graph, laid out as TensorFlow lays it out, so the
`SaverDef` in a meta graph points at real tensors and TensorFlow can drive our graphs and we
theirs::

    save/filename/input (Const "model") → save/filename → save/Const   (the fed prefix)
    save/SaveV2(save/Const, save/SaveV2/tensor_names, save/SaveV2/shape_and_slices, vars…)
    save/control_dependency = Identity(save/Const) after save/SaveV2      (save_tensor_name)
    save/RestoreV2 (on CPU:0) → save/Assign, save/Assign_1, … → save/restore_all (NoOp)

With `sharded=True` each device writes `<prefix>_temp_<uuid>/part-0000i-of-0000n` and
`save/MergeV2Checkpoints` merges them into `<prefix>`.

Saving never leaves a half-written checkpoint as the latest: the bundle writer writes
temporary files and renames them, the meta graph is written next, and only then is the
`checkpoint` state file replaced (atomically). Old checkpoints beyond `max_to_keep` are
deleted unless `keep_checkpoint_every_n_hours` keeps them.
"""

from __future__ import annotations

import logging
import numbers
import os
import time
import uuid
from dataclasses import dataclass, replace

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.formats.checkpoint import state as ckpt_state
from tensorweave.formats.checkpoint.bundle import BundleReader, normalize_prefix
from tensorweave.formats.checkpoint.slices import parse_shape_and_slice
from tensorweave.framework.graph import GraphKeys, get_collection, get_default_graph
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.saveable import SaveableObject
from tensorweave.framework.scopes import name_scope
from tensorweave.ops import array_ops, io_ops, state_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import op_traits
from tensorweave.proto import saver_pb2
from tensorweave.runtime import device as device_lib
from tensorweave.runtime.kernels.cpu import io as io_kernels
from tensorweave.shapes import TensorShape
from tensorweave.training import meta_graph

_LOG = logging.getLogger("tensorweave")
SaverDef = saver_pb2.SaverDef


@dataclass
class _Saveable:
    """One variable as the Saver sees it: checkpoint name, ref tensor, dtype, device, and for
    a part of a partitioned variable its `shape_and_slices` spec ("" for a whole one)."""

    name: str
    ref: Tensor
    spec: str = ""
    owner: SaveableObject | None = None   # NOTE: set for a spec of a SaveableObject

    @property
    def dtype(self) -> dtypes.DType:
        return self.ref.dtype.base_dtype

    @property
    def device(self) -> str:
        return self.ref.device


# -- var_list → saveables --------------------------------------------------------------------
def _ref_tensor(value, name=None) -> Tensor:
    """The ref tensor of a Variable or of a variable op's output.

    Raises:
      TypeError: `value` is not a variable.
    """
    if hasattr(value, "_ref") and callable(value._ref):
        return value._ref()
    if (isinstance(value, Tensor) and value.dtype.is_ref_dtype
            and op_traits(value.op.type).variable):
        return value
    what = f" (for name {name!r})" if name else ""
    raise TypeError(f"Variable to save is not a Variable{what}: {value!r}")


def op_list_to_dict(var_list) -> dict[str, Tensor]:
    """{checkpoint name: ref tensor}: a list is keyed by variable op names, a dict as given.

    Raises:
      TypeError: neither a list nor a dict, or an item that is not a variable.
      ValueError: two variables share a name.
    """
    if isinstance(var_list, dict):
        return {_check_name(k): _ref_tensor(v, k) for k, v in var_list.items()}
    if not isinstance(var_list, (list, tuple, set)):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {var_list}")
    out: dict[str, Tensor] = {}
    for ref in sorted((_ref_tensor(v) for v in var_list), key=lambda t: t.name):
        if ref.op.name in out:
            raise ValueError(f"At least two variables have the same name: {ref.op.name}")
        out[ref.op.name] = ref
    return out


def _check_name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"Checkpoint names must be strings, got {name!r}")
    return name


def _slice_spec(var) -> str:
    info = var._get_save_slice_info() if hasattr(var, "_get_save_slice_info") else None
    return info.spec if info is not None else ""


def _partitioned(var_list) -> tuple[list, list[_Saveable]]:
    """(the rest, saveables of every partitioned variable and part): a PartitionedVariable
    or a dict value that is one or a list of parts saves its parts as slices of the dict key
    (or the variable's name); a list's part variables as slices of their full name (TF's)."""
    if not isinstance(var_list, (dict, list, tuple, set)):
        return var_list, []  # NOTE: op_list_to_dict names the problem
    items = var_list.items() if isinstance(var_list, dict) else [(None, v) for v in var_list]
    rest, out = [], []
    for key, var in items:
        parts = list(var) if hasattr(var, "_get_variable_list") or isinstance(
            var, (list, tuple)) else [var]
        specs = [_slice_spec(p) for p in parts]
        if not all(specs):
            rest.append((key, var))
            continue
        for part, spec in zip(parts, specs):
            name = key if key is not None else part._get_save_slice_info().full_name
            out.append(_Saveable(_check_name(name), _ref_tensor(part, name), spec))
    if isinstance(var_list, dict):
        return dict(rest), out
    return [v for _, v in rest], out


def _saveable_objects(var_list) -> tuple[object, list[_Saveable]]:
    """(var_list without its SaveableObjects, one _Saveable per spec of each of them)."""
    if isinstance(var_list, dict):
        objs = [v for v in var_list.values() if isinstance(v, SaveableObject)]
        rest: object = {k: v for k, v in var_list.items() if not isinstance(v, SaveableObject)}
    elif isinstance(var_list, (list, tuple, set)):
        objs = [v for v in var_list if isinstance(v, SaveableObject)]
        rest = [v for v in var_list if not isinstance(v, SaveableObject)]
    else:
        return var_list, []
    return rest, [_Saveable(spec.name, spec.tensor, spec.slice_spec, owner=obj)
                  for obj in objs for spec in obj.specs]


def _saveables(var_list) -> list[_Saveable]:
    """Sorted by name (parts of one variable by slice). Raises ValueError when one variable is
    saved under two names, or two saveables under one name."""
    var_list, owned = _saveable_objects(var_list)
    rest, sliced = _partitioned(var_list) if var_list else (var_list, [])
    whole = [_Saveable(name, ref) for name, ref in op_list_to_dict(rest).items()] if rest \
        else []
    seen: dict[Operation, str] = {}
    names = {s.name for s in whole}
    for s in owned:
        if s.name in names:
            raise ValueError(f"At least two variables have the same name: {s.name}")
        names.add(s.name)
    for s in sorted(whole + sliced, key=lambda s: (s.name, s.ref.op.name)):
        if s.ref.op in seen:
            raise ValueError(f"The same saveable will be restored with two names: {s.name} "
                             f"and {seen[s.ref.op]}")
        if s.spec and s.name in names:
            raise ValueError(f"At least two variables have the same name: {s.name}")
        seen[s.ref.op] = s.name
    return sorted(whole + sliced + owned, key=lambda s: (s.name, s.ref.op.name))


def _all_saveable_objects(scope=None) -> list:
    return get_collection(GraphKeys.GLOBAL_VARIABLES, scope) + \
        get_collection(GraphKeys.SAVEABLE_OBJECTS, scope)


# -- graph building --------------------------------------------------------------------------
def _with_dependencies(deps, tensor: Tensor, name: str = "control_dependency") -> Tensor:
    """`Identity(tensor)` after `deps`, colocated with `tensor` (TF's with_dependencies)."""
    g = tensor.graph
    with name_scope(None, name, [tensor]) as scope, g.colocate_with(tensor.op), \
            g.control_dependencies(deps):
        return array_ops.identity(tensor, name=scope)


def _group(ops, name: str) -> Operation:
    with get_default_graph().control_dependencies(ops):
        return apply_op("NoOp", name=name)


def _add_save_ops(filename: Tensor, saveables: list[_Saveable]) -> Tensor:
    save = apply_op("SaveV2", filename, [s.name for s in saveables],
                    [s.spec for s in saveables], [s.ref for s in saveables])
    return _with_dependencies([save], filename)


def _add_restore_ops(filename: Tensor, saveables: list[_Saveable], reshape: bool,
                     name: str) -> Operation:
    with get_default_graph().device("/device:CPU:0"):
        restored = io_ops.restore_v2(filename, [s.name for s in saveables],
                                     [s.spec for s in saveables], [s.dtype for s in saveables])
    assigns: list = []
    owned: dict[int, tuple[SaveableObject, dict]] = {}
    for s, value in zip(saveables, restored):
        if s.owner is not None:
            owned.setdefault(id(s.owner), (s.owner, {}))[1][s.name] = value
            continue
        validate = s.ref.shape.is_fully_defined()
        if reshape:
            value, validate = _reshaped(value, s.ref), False
        assigns.append(state_ops.assign(s.ref, value, validate_shape=validate))
    for owner, values in owned.values():   # NOTE: each gets its specs' tensors, in order
        assigns.append(owner.restore([values[spec.name] for spec in owner.specs], None))
    return _group(assigns, name)


def _reshaped(value: Tensor, ref: Tensor) -> Tensor:
    shape = ref.shape
    target = shape.as_list() if shape.is_fully_defined() else array_ops.shape(ref)
    return array_ops.reshape(value, target)


def _set_cpu0(device: str) -> str:
    """The CPU:0 device of `device`'s job/replica/task."""
    spec = device_lib.DeviceSpec.from_string(device or "")
    return replace(spec, device_type="CPU", device_index=0).to_string()


def _group_by_devices(saveables: list[_Saveable]) -> list[tuple[str, list[_Saveable]]]:
    per_device: dict[str, list[_Saveable]] = {}
    for s in saveables:
        per_device.setdefault(s.device, []).append(s)
    return sorted(per_device.items())


def _add_sharded_save_ops(filename: Tensor, per_device) -> Tensor:
    g = get_default_graph()
    with g.device("CPU"):
        tmp_prefix = io_ops.string_join([filename, f"_temp_{uuid.uuid4().hex}/part"])
    num_shards = apply_op("Const", value=_int32(len(per_device)), dtype=dtypes.int32,
                          name="num_shards")
    saves, prefixes, last = [], [], ""
    for shard, (device, saveables) in enumerate(per_device):
        last = device
        with g.device(_set_cpu0(device)):
            part = io_ops.sharded_filename(tmp_prefix, _int32(shard), num_shards)
            prefixes.append(part)
            saves.append(_add_save_ops(part, saveables))
    with g.control_dependencies([t.op for t in saves]), g.device(_set_cpu0(last)):
        merge = io_ops.merge_v2_checkpoints(prefixes, filename, delete_old_dirs=True)
        with g.control_dependencies([merge]):
            return array_ops.identity(filename)


def _int32(n: int) -> np.ndarray:
    return np.array(n, np.int32)


def _add_sharded_restore_ops(filename: Tensor, per_device, reshape: bool) -> Operation:
    g = get_default_graph()
    shards = []
    for device, saveables in per_device:
        with g.device(device):
            shards.append(_add_restore_ops(filename, saveables, reshape, "restore_shard"))
    return _group(shards, "restore_all")


def build_saver_def(saveables: list[_Saveable], reshape=False, sharded=False, max_to_keep=5,
                    keep_checkpoint_every_n_hours=10000.0, name=None,
                    filename=None) -> saver_pb2.SaverDef:
    """Adds the save/restore ops of `saveables` to their graph; returns their SaverDef."""
    graph = saveables[0].ref.graph
    with graph.as_default(), name_scope(name, "save", [s.ref for s in saveables]):
        fname = apply_op("PlaceholderWithDefault", filename or "model", dtype=dtypes.string,
                         shape=TensorShape([]), name="filename")
        fname = apply_op("PlaceholderWithDefault", fname, dtype=dtypes.string,
                         shape=TensorShape([]), name="Const")  # NOTE: TF keeps "Const"
        if sharded:
            per_device = _group_by_devices(saveables)
            save_tensor = _add_sharded_save_ops(fname, per_device)
            restore_op = _add_sharded_restore_ops(fname, per_device, reshape)
        else:
            save_tensor = _add_save_ops(fname, saveables)
            restore_op = _add_restore_ops(fname, saveables, reshape, "restore_all")
    return saver_pb2.SaverDef(
        filename_tensor_name=fname.name, save_tensor_name=save_tensor.name,
        restore_op_name=restore_op.name, max_to_keep=max_to_keep or 0, sharded=sharded,
        keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
        version=saver_pb2.SaverDef.V2)


# -- restore checks --------------------------------------------------------------------------
@dataclass
class _RestoreItem:
    """What restoring one checkpoint key does: assign it to the variable `ref`."""

    key: str
    ref: Tensor
    reshape: bool
    spec: str = ""

    @property
    def variable(self) -> str:
        return self.ref.op.name


def _restore_items_from_graph(graph, restore_op_name: str) -> list[_RestoreItem]:
    """The (key → variable) assignments under a restore op: NoOps → Assign(var, RestoreV2:i)."""
    items, stack, seen = [], [graph.get_operation_by_name(restore_op_name)], set()
    while stack:
        op = stack.pop()
        for c in op.control_inputs:
            if c in seen:
                continue
            seen.add(c)
            if c.type == "NoOp":
                stack.append(c)
            elif c.type == "Assign":
                value, reshape = c.inputs[1], False
                if value.op.type == "Reshape":
                    value, reshape = value.op.inputs[0], True
                key, spec = _restored_key(value)
                if key is not None:
                    items.append(_RestoreItem(key, c.inputs[0], reshape, spec))
    return items


def _restored_key(value: Tensor) -> tuple[str | None, str]:
    """(checkpoint key, slice spec) that a RestoreV2 output reads, or (None, "")."""
    from tensorweave.ops.shape_inference import constant_value

    if value.op.type != "RestoreV2":
        return None, ""
    names, specs = (constant_value(value.op.inputs[i]) for i in (1, 2))
    if names is None:
        return None, ""

    def text(array) -> str:
        v = array.reshape(-1)[value.value_index]
        return v.decode() if isinstance(v, bytes) else str(v)
    return text(names), "" if specs is None else text(specs)


_MISSING_HELP = ("Restoring from checkpoint failed. This is most likely due to a Variable name or "
                 "other graph key that is missing from the checkpoint. Please ensure that you "
                 "have not altered the graph expected based on the checkpoint.\n")
_MISMATCH_HELP = ("Restoring from checkpoint failed. This is most likely due to a mismatch "
                  "between the current graph and the graph from the checkpoint.\n")


def check_restore(items: list[_RestoreItem], reader: BundleReader) -> None:
    """Raises NotFoundError naming every missing key (with the closest names the checkpoint
    holds), or InvalidArgumentError naming every shape/dtype mismatch (graph vs file)."""
    missing = [i.key for i in items if i.key not in reader]
    if missing:
        raise errors.NotFoundError(None, None, _MISSING_HELP + io_kernels.missing_keys_message(
            missing, reader.names(), reader.prefix))
    problems = []
    for i in items:
        want, got = i.ref.dtype.base_dtype, reader.dtype(i.key)
        if want != got:
            problems.append(f"  variable {i.variable}: dtype {want.name} in the graph, "
                            f"{got.name} in the checkpoint (key {i.key})")
        stored = reader.shape(i.key)
        want_shape = TensorShape(parse_shape_and_slice(i.spec)[0]) if i.spec else i.ref.shape
        if not i.reshape and not want_shape.is_compatible_with(TensorShape(stored)):
            problems.append(f"  variable {i.variable}: shape {want_shape.as_list()} in the "
                            f"graph, {stored} in the checkpoint (key {i.key})")
    if problems:
        raise errors.InvalidArgumentError(
            None, None, _MISMATCH_HELP + f"Checkpoint {reader.prefix}:\n" + "\n".join(problems))


# -- the Saver -------------------------------------------------------------------------------
class Saver:
    """Saves and restores variables (TF1 `tf.train.Saver`; see the module docstring).

    Example:
        saver = tf.train.Saver(max_to_keep=3)
        path = saver.save(sess, "ckpt/model", global_step=step)   # "ckpt/model-<step>"
        saver.restore(sess, tf.train.latest_checkpoint("ckpt"))

    Raises (constructor):
      ValueError: no variables to save (unless `allow_empty`), duplicate names, a `var_list`
        with `defer_build`, or a SaverDef missing its tensor names.
      TypeError: `var_list` holds something that is not a variable.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=saver_pb2.SaverDef.V2, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either "
                             "set defer_build=False or var_list=None.")
        if write_version != saver_pb2.SaverDef.V2:
            _LOG.warning("Only the V2 checkpoint format is written; write_version ignored")
        del builder, restore_sequentially  # NOTE: one bulk RestoreV2, as TF's BulkSaverBuilder
        self._var_list = var_list
        self._reshape, self._sharded = reshape, sharded
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._name, self._filename = name, filename
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self.saver_def = _as_saver_def(saver_def) if saver_def is not None else None
        self._is_built = False
        self._is_empty = False
        self._restore_items: list[_RestoreItem] | None = None
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        if self.saver_def is not None:
            self._check_saver_def()
        if not defer_build:
            self.build()

    # -- building ---------------------------------------------------------------------------
    def build(self) -> None:
        """Adds the save/restore ops (needed once before `save` with `defer_build=True`)."""
        if self._is_built:
            return
        self._is_built = True
        if self.saver_def is None:
            self._build_from_var_list()
            if self._is_empty:
                return
        elif self._name:
            # NOTE: as TF, `name` doubles as the import scope of a given SaverDef
            d = self.saver_def
            d.filename_tensor_name = meta_graph.prepend_name_scope(d.filename_tensor_name,
                                                                   self._name)
            d.save_tensor_name = meta_graph.prepend_name_scope(d.save_tensor_name, self._name)
            d.restore_op_name = meta_graph.prepend_name_scope(d.restore_op_name, self._name)
        self._check_saver_def()
        self._next_checkpoint_time = (time.time() +
                                      self.saver_def.keep_checkpoint_every_n_hours * 3600)

    def _build_from_var_list(self) -> None:
        var_list = self._var_list if self._var_list is not None else _all_saveable_objects()
        if not var_list:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        saveables = _saveables(var_list)
        self.saver_def = build_saver_def(
            saveables, self._reshape, self._sharded, self._max_to_keep, self._keep_hours,
            self._name, self._filename)
        self._restore_items = [_RestoreItem(s.name, s.ref, self._reshape, s.spec)
                               for s in saveables]

    def _check_saver_def(self) -> None:
        d = self.saver_def
        if not isinstance(d, saver_pb2.SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {d}")
        if not d.save_tensor_name:
            raise ValueError(f"saver_def must specify the save_tensor_name: {d}")
        if not d.restore_op_name:
            raise ValueError(f"saver_def must specify the restore_op_name: {d}")

    def as_saver_def(self) -> saver_pb2.SaverDef:
        return self.saver_def

    def to_proto(self, export_scope=None):
        """The SaverDef with `export_scope` stripped; None when the saver lies outside it."""
        if export_scope is None:
            return self.saver_def
        d = self.saver_def
        names = (d.filename_tensor_name, d.save_tensor_name, d.restore_op_name)
        if not all(n.startswith(export_scope) for n in names):
            return None
        out = saver_pb2.SaverDef()
        out.CopyFrom(d)
        out.filename_tensor_name = meta_graph.strip_name_scope(names[0], export_scope)
        out.save_tensor_name = meta_graph.strip_name_scope(names[1], export_scope)
        out.restore_op_name = meta_graph.strip_name_scope(names[2], export_scope)
        return out

    @staticmethod
    def from_proto(saver_def, import_scope=None) -> Saver:
        return Saver(saver_def=saver_def, name=import_scope)

    # -- bookkeeping of kept checkpoints ----------------------------------------------------
    @property
    def last_checkpoints(self) -> list[str]:
        """Prefixes of the checkpoints not yet deleted, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints) -> None:
        """DEPRECATED in TF: sets the kept checkpoints (never kept by the hours rule)."""
        if not isinstance(last_checkpoints, list):
            raise AssertionError("last_checkpoints must be a list")
        self._last_checkpoints = [(p, float("inf")) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        """Sets the kept checkpoints as a list of (prefix, timestamp)."""
        if not isinstance(last_checkpoints_with_time, list):
            raise AssertionError("last_checkpoints_with_time must be a list")
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths) -> None:
        """Takes over checkpoints of an earlier run (missing ones are skipped), timed by the
        modification times of their index files, so `max_to_keep` deletes them in turn."""
        found = []
        for p in checkpoint_paths:
            mtimes = ckpt_state.get_checkpoint_mtimes([p])
            if mtimes:
                found.append((p, mtimes[0]))
        self.set_last_checkpoints_with_time(found)

    def _record_last_checkpoint(self, path: str) -> None:
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != path]
        self._last_checkpoints.append((path, time.time()))
        if len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if stamp > self._next_checkpoint_time:
                self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
                continue
            try:
                ckpt_state.remove_checkpoint(path, saver_pb2.SaverDef.V2, meta_graph_suffix)
            except OSError as e:
                _LOG.warning("Ignoring: %s", e)

    # -- save / restore ---------------------------------------------------------------------
    def _checkpoint_file(self, sess, save_path: str, global_step, latest_filename: str) -> str:
        if global_step is None:
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': "
                                 f"'{latest_filename}' and '{save_path}'")
            return save_path
        step = _step_value(sess, global_step)
        return f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"

    def _run_save(self, sess, save_path: str, checkpoint_file: str) -> str:
        """Runs the save op; returns the prefix it wrote. Raises ValueError (as TF) when the
        op fails because the parent directory of `save_path` is missing."""
        try:
            out = sess.run(self.saver_def.save_tensor_name,
                           {self.saver_def.filename_tensor_name: checkpoint_file})
        except (errors.NotFoundError, errors.FailedPreconditionError) as e:
            if not os.path.isdir(os.path.dirname(save_path) or "."):
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't "
                                 "save.") from e
            raise
        return out.decode() if isinstance(out, bytes) else str(out)

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Saves the variables; returns the checkpoint prefix (`save_path-<step>`), or None for
        an empty Saver.

        Order: data and index (atomic renames), the meta graph, then the state file; so the
        `checkpoint` file never names a checkpoint that is not complete.

        Raises:
          RuntimeError: `defer_build` and `build()` was not called.
          TypeError: `sess` is not a session.
          ValueError: `latest_filename` has a directory or collides with `save_path`; the
            parent directory of `save_path` does not exist (as TF: the save op creates only
            the checkpoint's own directory, one level, so `save_path`'s parent must exist).
          PermissionDeniedError, ResourceExhaustedError, ...: the errno's TF class when the
            files cannot be written (`errors.from_os_error`).
        """
        del save_debug_info
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or ckpt_state.LATEST_FILENAME
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        if not hasattr(sess, "run") or not hasattr(sess, "graph"):
            raise TypeError(f"'sess' must be a Session; {sess}")
        save_path = os.fspath(save_path)
        checkpoint_file = self._checkpoint_file(sess, save_path, global_step, latest_filename)
        path = None
        if not self._is_empty:
            path = self._run_save(sess, save_path, checkpoint_file)
        if write_meta_graph:
            with sess.graph.as_default():
                self.export_meta_graph(ckpt_state.meta_graph_filename(checkpoint_file,
                                                                      meta_graph_suffix),
                                       strip_default_attrs=strip_default_attrs)
        if path is not None and write_state:
            self._record_last_checkpoint(path)
            ckpt_state.update_checkpoint_state(
                os.path.dirname(save_path) or ".", path, self.last_checkpoints,
                latest_filename, save_relative_paths=self._save_relative_paths)
            self._maybe_delete_old_checkpoints(meta_graph_suffix)
        return path

    def restore(self, sess, save_path) -> None:
        """Restores every variable of this Saver from checkpoint `save_path` (a prefix, or
        one of its `.index`/`.data-…`/`.meta` files).

        Raises:
          ValueError: `save_path` is None or no checkpoint exists there.
          NotFoundError: variables missing from the checkpoint (all listed, each with the
            closest names the checkpoint holds).
          InvalidArgumentError: shape or dtype mismatches (graph side and file side named).
          DataLossError: a truncated or corrupt checkpoint file (named).
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = normalize_prefix(save_path)
        if not ckpt_state.checkpoint_exists(prefix):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {prefix}")
        _LOG.info("Restoring parameters from %s", prefix)
        with BundleReader(prefix) as reader:
            check_restore(self._items(sess.graph), reader)
        sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: prefix})

    def _items(self, graph) -> list[_RestoreItem]:
        if self._restore_items is None:
            self._restore_items = _restore_items_from_graph(graph, self.saver_def.restore_op_name)
        return self._restore_items

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False, clear_extraneous_savers=False,
                          strip_default_attrs=False, save_debug_info=False):
        """Writes (when `filename`) and returns the default graph's MetaGraphDef with this
        Saver's SaverDef."""
        return meta_graph.export_meta_graph(
            filename=filename, graph_def=get_default_graph().as_graph_def(add_shapes=True),
            saver_def=self.saver_def, collection_list=collection_list, as_text=as_text,
            export_scope=export_scope, clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs, save_debug_info=save_debug_info)


def _step_value(sess, global_step) -> int:
    if isinstance(global_step, numbers.Integral):
        return int(global_step)
    if isinstance(global_step, str):
        global_step = sess.graph.as_graph_element(global_step)
    return int(sess.run(global_step))


def _as_saver_def(saver_def) -> saver_pb2.SaverDef:
    if isinstance(saver_def, saver_pb2.SaverDef):
        out = saver_pb2.SaverDef()
        out.CopyFrom(saver_def)
        return out
    if hasattr(saver_def, "SerializeToString"):
        return saver_pb2.SaverDef.FromString(saver_def.SerializeToString())
    raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {saver_def}")


def saver_from_imported_meta_graph(meta_graph_def, import_scope, imported_vars):
    """The Saver `import_meta_graph` returns (TF's _create_saver_from_imported_meta_graph)."""
    if meta_graph_def.HasField("saver_def"):
        scope = import_scope
        if imported_vars:
            key = next(iter(imported_vars))
            scope = imported_vars[key].name[:-len(key)]
        return Saver(saver_def=meta_graph_def.saver_def, name=scope)
    if _all_saveable_objects(scope=import_scope):
        return Saver()
    _LOG.info("Saver not created because there are no variables in the graph to restore")
    return None


meta_graph.register_proto_function(GraphKeys.SAVERS, saver_pb2.SaverDef, Saver.to_proto,
                                   Saver.from_proto)

__all__ = ["Saver", "SaverDef"]
