"""CPU kernels for checkpoint I/O ops: SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename,
ShardedFilespec, StringJoin.

A non-empty `shape_and_slices` element saves or restores a slice of a larger tensor (a part
of a partitioned variable, `formats/checkpoint/slices.py`).

Files are written atomically by `formats/checkpoint/bundle.py` (temporary names, then
renames), so a failing or interrupted SaveV2 leaves any previous checkpoint at the prefix
intact. Reading checks every checksum; missing names are reported all at once.
"""

from __future__ import annotations

import difflib

import numpy as np

from tensorweave import errors
from tensorweave.formats.checkpoint.bundle import BundleReader, BundleWriter, merge_bundles
from tensorweave.runtime.kernels.registry import register_kernel


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def _text(value) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)


def _scalar_text(value, what: str) -> str:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise _invalid(f"Input {what} must be a scalar string, got shape {list(arr.shape)}")
    return _text(arr.item())


def _texts(value) -> list[str]:
    return [_text(v) for v in np.asarray(value, dtype=object).reshape(-1).tolist()]


def _write(w: BundleWriter, name: str, spec: str, dt, value) -> None:
    """One SaveV2 tensor: whole, or (a non-empty `spec`) a slice of a larger tensor."""
    if spec:
        w.add_slice(name, spec, value, dt)
    else:
        w.add(name, value, dt)


def _read(reader: BundleReader, name: str, spec: str) -> np.ndarray:
    return reader.get_slice(name, spec) if spec else reader.get_tensor(name)


def _os_error(e: OSError, what: str) -> errors.OpError:
    """The TF error class of an OS error while touching checkpoint files."""
    return errors.from_os_error(e, what)


# -- SaveV2 / RestoreV2 ----------------------------------------------------------------------
@register_kernel("SaveV2")
def _save_v2(node):
    dts = [d.base_dtype for d in node.attr("dtypes")]

    def run(prefix, tensor_names, shape_and_slices, *tensors):
        path = _scalar_text(prefix, "prefix")
        names, slices = _texts(tensor_names), _texts(shape_and_slices)
        if not len(names) == len(slices) == len(tensors):
            raise _invalid(f"Got {len(names)} tensor names, {len(slices)} shape_and_slices and "
                           f"{len(tensors)} tensors; they must be the same number")
        try:
            with BundleWriter(path) as w:
                for name, spec, dt, t in zip(names, slices, dts, tensors):
                    _write(w, name, spec, dt, t)
        except OSError as e:
            raise _os_error(e, f"Failed to write checkpoint {path}") from e

    return run


def missing_keys_message(missing: list[str], available: list[str], where: str) -> str:
    """Names every missing key with up to 3 close names that the checkpoint does hold."""
    def hint(name: str) -> str:
        near = difflib.get_close_matches(name, available, n=3, cutoff=0.5)
        return f" (closest in checkpoint: {', '.join(near)})" if near else ""

    if len(missing) == 1:
        return f"Key {missing[0]} not found in checkpoint {where}{hint(missing[0])}"
    lines = "\n".join(f"  {name}{hint(name)}" for name in missing)
    return f"{len(missing)} keys not found in checkpoint {where}:\n{lines}"


def check_restorable(reader: BundleReader, names: list[str], dts: list) -> None:
    """Raises NotFoundError listing every missing name, or InvalidArgumentError on a dtype
    that differs from the stored one."""
    missing = [n for n in names if n not in reader]
    if missing:
        raise errors.NotFoundError(
            None, None, missing_keys_message(missing, reader.names(), reader.prefix))
    for name, dt in zip(names, dts):
        stored = reader.dtype(name)
        if stored != dt:
            raise _invalid(f"tensor_name = {name}; expected dtype {dt.name} does not equal "
                           f"original dtype {stored.name} (checkpoint {reader.prefix})")


@register_kernel("RestoreV2")
def _restore_v2(node):
    dts = [d.base_dtype for d in node.attr("dtypes")]

    def run(prefix, tensor_names, shape_and_slices):
        names, slices = _texts(tensor_names), _texts(shape_and_slices)
        if not len(names) == len(slices) == len(dts):
            raise _invalid(f"Got {len(names)} tensor names and {len(slices)} shape_and_slices "
                           f"for {len(dts)} dtypes; they must be the same number")
        with BundleReader(_scalar_text(prefix, "prefix")) as reader:
            check_restorable(reader, names, dts)
            if any(slices):
                out = [_read(reader, n, spec) for n, spec in zip(names, slices)]
            else:  # NOTE: mapped: Assign copies the value anyway, so no fresh buffer first
                out = reader.get_tensors(names, mapped=True)
        return out[0] if len(out) == 1 else tuple(out)

    return run


# -- sharded checkpoints ---------------------------------------------------------------------
@register_kernel("MergeV2Checkpoints")
def _merge_v2(node):
    delete_old_dirs = node.attr("delete_old_dirs")
    allow_missing = node.attr("allow_missing_files")

    def run(checkpoint_prefixes, destination_prefix):
        dest = _scalar_text(destination_prefix, "destination_prefix")
        try:
            merge_bundles(_texts(checkpoint_prefixes), dest, delete_old_dirs, allow_missing)
        except OSError as e:
            raise _os_error(e, f"Failed to merge checkpoints into {dest}") from e

    return run


def _int_scalar(value, what: str) -> int:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise _invalid(f"Input {what} must be a scalar, got shape {list(arr.shape)}")
    return int(arr)


@register_kernel("ShardedFilename")
def _sharded_filename(node):
    def run(basename, shard, num_shards):
        base = _scalar_text(basename, "basename")
        i, n = _int_scalar(shard, "shard"), _int_scalar(num_shards, "num_shards")
        name = f"{base}-{i:05d}-of-{n:05d}"
        return np.array(name.encode(), dtype=object)

    return run


@register_kernel("ShardedFilespec")
def _sharded_filespec(node):
    def run(basename, num_shards):
        base = _scalar_text(basename, "basename")
        spec = f"{base}-?????-of-{_int_scalar(num_shards, 'num_shards'):05d}"
        return np.array(spec.encode(), dtype=object)

    return run


def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


@register_kernel("StringJoin")
def _string_join(node):
    sep = _as_bytes(node.attr("separator") or b"")

    def run(*inputs):
        if not inputs:
            return np.array(b"", dtype=object)
        arrays = [np.asarray(x, dtype=object) for x in inputs]
        shapes = {a.shape for a in arrays if a.ndim}
        if len(shapes) > 1:
            raise _invalid(f"StringJoin inputs must be scalars or have the same shape, got "
                           f"{sorted(list(s) for s in shapes)}")
        shape = shapes.pop() if shapes else ()
        cols = [np.broadcast_to(a, shape).reshape(-1).tolist() for a in arrays]
        out = np.empty(len(cols[0]), dtype=object)
        out[:] = [sep.join(_as_bytes(v) for v in row) for row in zip(*cols)]
        return out.reshape(shape)

    return run
