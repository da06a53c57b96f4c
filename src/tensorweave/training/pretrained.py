"""Pretrained parameters as initial values: `.npz`, safetensors and checkpoints, by name.

    tf.train.load_pretrained(sess, "bert.safetensors",
                             name_map=lambda var_name: var_name.replace("/", "."))

Each variable is looked up in the file under its name (`dense/kernel`), or under the key a
`name_map` gives (a dict {variable or variable name: key}, or a callable var_name → key;
None skips the variable). Values go in through the variables' own initializers (fed), so no
op is added and a finalized graph works. Before anything is assigned, every variable without
a key is listed in one error with the closest keys the file holds, and every shape or dtype
mismatch names both sides; `allow_cast` converts between numeric dtypes instead.

safetensors is read by hand (ECOSYSTEM §2.7): an 8-byte little-endian header length, a JSON
header `{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then
the raw little-endian bytes; tensors are memory-mapped, not copied, until assigned.
"""

from __future__ import annotations

import difflib
import json
import os
import struct

import numpy as np

from tensorweave import dtypes

_ST_DTYPES = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "F16": "float16", "BF16": "bfloat16", "I32": "int32", "U32": "uint32", "F32": "float32",
    "F64": "float64", "I64": "int64", "U64": "uint64", "C64": "complex64",
}
_ST_CODES = {v: k for k, v in _ST_DTYPES.items()}
# NOTE: the reference writer orders tensors by its Dtype enum, descending, then by name
_ST_RANK = ["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64",
            "I64", "U64"]
_MAX_HEADER = 100 << 20


# -- sources ---------------------------------------------------------------------------------
class _Source:
    """Named tensors of one file: `dtype(name)` (a DType), `shape(name)`, `array(name)`."""

    def __init__(self, path: str, arrays: dict, dtype_of: dict):
        self.path = path
        self._arrays = arrays
        self._dtypes = dtype_of

    def names(self) -> list[str]:
        return sorted(self._arrays)

    def __contains__(self, name) -> bool:
        return name in self._arrays

    def dtype(self, name: str) -> dtypes.DType:
        return self._dtypes[name]

    def shape(self, name: str) -> list[int]:
        return list(self._arrays[name].shape)

    def array(self, name: str) -> np.ndarray:
        return self._arrays[name]


def _bad(path: str, what: str) -> ValueError:
    return ValueError(f"{path} is not a valid safetensors file: {what}")


def _st_header(path: str) -> tuple[dict, int]:
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise _bad(path, "shorter than its 8-byte header length")
        (n,) = struct.unpack("<Q", head)
        size = os.fstat(f.fileno()).st_size
        if n > min(size - 8, _MAX_HEADER):
            raise _bad(path, f"header length {n} exceeds the file ({size} bytes)")
        try:
            header = json.loads(f.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise _bad(path, f"header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(path, "header is not a JSON object")
    return header, 8 + n


def _st_dtype(path: str, name: str, code) -> dtypes.DType:
    if code not in _ST_DTYPES:
        raise _bad(path, f"tensor {name!r} has unsupported dtype {code!r}")
    return dtypes.as_dtype(_ST_DTYPES[code])


def _storage(dtype: dtypes.DType) -> np.dtype:
    from tensorweave.formats.checkpoint.bundle import storage_dtype

    return storage_dtype(dtype)


def read_safetensors_source(path) -> _Source:
    """The tensors of a safetensors file, memory-mapped (read-only).

    Raises:
      ValueError: a malformed header, an unsupported dtype, or offsets that do not fit the
        shapes or the file.
    """
    path = os.fspath(path)
    header, start = _st_header(path)
    header.pop("__metadata__", None)
    size = os.path.getsize(path) - start
    buf = np.memmap(path, np.uint8, "r", offset=start, shape=(size,)) if size else \
        np.zeros(0, np.uint8)
    arrays, dts = {}, {}
    for name, info in header.items():
        try:
            code, shape, (begin, end) = info["dtype"], list(info["shape"]), info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise _bad(path, f"entry {name!r} lacks dtype/shape/data_offsets") from None
        dt = _st_dtype(path, name, code)
        np_dt = _storage(dt)
        want = int(np.prod(shape, dtype=np.int64)) * np_dt.itemsize
        if not 0 <= begin <= end <= size or end - begin != want:
            raise _bad(path, f"tensor {name!r}: offsets [{begin}, {end}) do not hold shape "
                             f"{shape} of {code} inside {size} data bytes")
        arrays[name] = buf[begin:end].view(np_dt).reshape(shape)
        dts[name] = dt
    return _Source(path, arrays, dts)


def read_safetensors_metadata(path) -> dict:
    """The `__metadata__` strings of a safetensors file ({} when absent)."""
    header, _ = _st_header(os.fspath(path))
    return dict(header.get("__metadata__") or {})


def write_safetensors(path, tensors: dict, metadata: dict | None = None) -> None:
    """Writes `{name: array}` as safetensors, laid out as the reference writer does (tensors by
    descending dtype rank, then name; header padded with spaces to 8 bytes), atomically.

    Raises:
      ValueError: a dtype safetensors cannot hold (strings, complex128), or a metadata value
        that is not a string.
    """
    arrays = {str(k): np.asarray(v, order="C") for k, v in tensors.items()}
    codes = {k: _st_code(k, a) for k, a in arrays.items()}
    order = sorted(arrays, key=lambda k: (-_ST_RANK.index(codes[k]), k))
    header: dict = {}
    if metadata:
        if not all(isinstance(v, str) for v in metadata.values()):
            raise ValueError("safetensors metadata values must be strings")
        header["__metadata__"] = dict(metadata)
    offset = 0
    for k in order:
        n = arrays[k].nbytes
        header[k] = {"dtype": codes[k], "shape": list(arrays[k].shape),
                     "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    from tensorweave.training.graph_io import _atomic_write

    body = b"".join(arrays[k].astype(arrays[k].dtype.newbyteorder("<"), copy=False).tobytes()
                    for k in order)
    _atomic_write(os.fspath(path), struct.pack("<Q", len(text)) + text + body)


def _st_code(name: str, array: np.ndarray) -> str:
    try:
        code = _ST_CODES.get(dtypes.as_dtype(array.dtype).name)
    except TypeError:
        code = None
    if code is None:
        raise ValueError(f"safetensors cannot hold tensor {name!r} of dtype {array.dtype}")
    return code


def read_npz_source(path) -> _Source:
    """The arrays of an `.npz` file (no pickles: object arrays are refused)."""
    path = os.fspath(path)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return _Source(path, arrays, {k: _dtype_of(path, k, a) for k, a in arrays.items()})


def _dtype_of(path: str, name: str, array: np.ndarray) -> dtypes.DType:
    if array.dtype.kind in "SU":
        return dtypes.string
    try:
        return dtypes.as_dtype(array.dtype)
    except TypeError:
        raise ValueError(f"{path}: array {name!r} has dtype {array.dtype}, which no "
                         "variable can hold") from None


class _CheckpointSource(_Source):
    """A checkpoint's tensors, each read (and checksummed) only when asked for."""

    def __init__(self, reader):
        super().__init__(reader.prefix, {}, {})
        self._reader = reader

    def names(self) -> list[str]:
        return self._reader.names()

    def __contains__(self, name) -> bool:
        return name in self._reader

    def dtype(self, name: str) -> dtypes.DType:
        return self._reader.dtype(name)

    def shape(self, name: str) -> list[int]:
        return self._reader.shape(name)

    def array(self, name: str) -> np.ndarray:
        return self._reader.get_tensor(name)


def _checkpoint_source(path: str) -> _Source:
    from tensorweave.formats.checkpoint.bundle import BundleReader
    from tensorweave.training.checkpoint_utils import _get_checkpoint_filename

    return _CheckpointSource(BundleReader(_get_checkpoint_filename(path)))


def open_pretrained(path) -> _Source:
    """The source for `path`: `.npz`, `.safetensors` (or `.st`), else a checkpoint (prefix,
    one of its files, or a directory holding a `checkpoint` state file)."""
    path = os.fspath(path)
    lower = path.lower()
    if lower.endswith(".npz"):
        return read_npz_source(path)
    if lower.endswith((".safetensors", ".st")):
        return read_safetensors_source(path)
    return _checkpoint_source(path)


def read_pretrained(path) -> dict[str, np.ndarray]:
    """{name: array} of a pretrained-parameter file (see `open_pretrained`). safetensors
    arrays are read-only memory maps."""
    src = open_pretrained(path)
    return {n: src.array(n) for n in src.names()}


# -- loading into variables ------------------------------------------------------------------
def _is_variable(x) -> bool:
    return hasattr(x, "_ref") and hasattr(x, "initializer")


def _pairs(var_list, name_map) -> list[tuple[object, str]]:
    """(variable, file key) for every variable to load."""
    from tensorweave.ops.variables import global_variables

    variables = list(var_list) if var_list is not None else global_variables()
    if name_map is None:
        return [(v, v.op.name) for v in variables]
    if callable(name_map):
        pairs = [(v, name_map(v.op.name)) for v in variables]
        return [(v, k) for v, k in pairs if k is not None]
    by_name = {v.op.name: v for v in variables}
    out = []
    for var, key in name_map.items():
        v = var if _is_variable(var) else by_name.get(var)
        if v is None:
            raise ValueError(f"name_map names variable {var!r}, which is not among the "
                             f"variables to load{_closest(str(var), list(by_name))}")
        out.append((v, key))
    return out


def _closest(name: str, available: list[str]) -> str:
    near = difflib.get_close_matches(name, available, n=3, cutoff=0.5)
    return f" (closest: {', '.join(near)})" if near else ""


def _castable(a: dtypes.DType, b: dtypes.DType) -> bool:
    return a != dtypes.string and b != dtypes.string


def check_against(pairs, src: _Source, allow_missing=False, allow_cast=False) -> list:
    """The pairs whose keys exist; raises ValueError listing every missing key (unless
    `allow_missing`) or every shape/dtype mismatch (file side and variable side)."""
    missing = [(v, k) for v, k in pairs if k not in src]
    if missing and not allow_missing:
        lines = [f"  {v.op.name} (key {k!r}){_closest(k, src.names())}" for v, k in missing]
        raise ValueError(f"{len(missing)} variable(s) have no value in {src.path}:\n" +
                         "\n".join(lines))
    pairs = [(v, k) for v, k in pairs if k in src]
    problems = []
    for v, k in pairs:
        want, got = v.dtype.base_dtype, src.dtype(k)
        if not v.get_shape().is_compatible_with(src.shape(k)):
            problems.append(f"  variable {v.op.name}: shape {v.get_shape().as_list()}; "
                            f"{k!r} in {src.path}: shape {src.shape(k)}")
        if want != got and not (allow_cast and _castable(want, got)):
            problems.append(f"  variable {v.op.name}: dtype {want.name}; {k!r} in "
                            f"{src.path}: dtype {got.name} (allow_cast=True converts)")
    if problems:
        raise ValueError("Pretrained values do not fit the variables:\n" + "\n".join(problems))
    return pairs


def _as_float32(array: np.ndarray, dtype: dtypes.DType) -> np.ndarray:
    if dtype == dtypes.bfloat16 and array.dtype == np.uint16:
        return (array.astype(np.uint32) << 16).view(np.float32)  # NOTE: exact widening
    return array.astype(np.float32)


def _value(src: _Source, key: str, var) -> np.ndarray:
    array, got, want = src.array(key), src.dtype(key), var.dtype.base_dtype
    if got == want:
        return array
    if got == dtypes.bfloat16:
        array = _as_float32(array, got)
    return array.astype(want.np_dtype)


def _feeds(pairs, src: _Source) -> tuple[list, dict]:
    inits, feeds = [], {}
    for v, k in pairs:
        init = getattr(v.initializer, "op", v.initializer)
        if init.type != "Assign" or len(init.inputs) != 2:
            raise ValueError(f"variable {v.op.name} has no Assign initializer to feed")
        inits.append(init)
        feeds[init.inputs[1]] = _value(src, k, v)
    return inits, feeds


def load_pretrained(sess, path, var_list=None, name_map=None, allow_missing=False,
                    allow_cast=False) -> list[str]:
    """Assigns values from a pretrained-parameter file to variables, by name.

    Args:
      sess: the session holding the variables.
      path: `.npz`, `.safetensors`, or a checkpoint (see `open_pretrained`).
      var_list: the variables to fill (default: all global variables).
      name_map: {variable or its name: file key} (only those are loaded), or a callable
        var_name → key (None skips the variable); default: the variable's own name.
      allow_missing: skip variables the file has no key for, instead of failing.
      allow_cast: convert numeric dtypes (e.g. float16 → float32) instead of failing.

    Returns:
      The names of the variables that were assigned.
    Raises:
      ValueError: missing keys (all listed, with the closest keys in the file), shape or
        dtype mismatches (both sides named), a malformed file.
    """
    src = open_pretrained(path)
    pairs = check_against(_pairs(var_list, name_map), src, allow_missing, allow_cast)
    if pairs:
        inits, feeds = _feeds(pairs, src)
        sess.run(inits, feed_dict=feeds)
    return [v.op.name for v, _ in pairs]


def pretrained_init_fn(path, var_list=None, name_map=None, allow_missing=False,
                       allow_cast=False):
    """A function `fn(*args)` that loads the file into the variables using the session given
    as its last argument (fits `Scaffold(init_fn=...)`, which calls `fn(scaffold, sess)`).
    The file and the names are checked now, while the graph is being built."""
    src = open_pretrained(path)
    pairs = check_against(_pairs(var_list, name_map), src, allow_missing, allow_cast)

    def init_fn(*args):
        sess = args[-1]
        if pairs:
            inits, feeds = _feeds(pairs, src)
            sess.run(inits, feed_dict=feeds)

    return init_fn


__all__ = ["load_pretrained", "pretrained_init_fn", "read_pretrained", "open_pretrained",
           "write_safetensors", "read_safetensors_metadata"]
