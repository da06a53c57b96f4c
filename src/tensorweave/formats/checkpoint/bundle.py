"""TensorFlow's V2 checkpoint (tensor bundle): `BundleWriter`, `BundleReader`, `merge_bundles`.

A checkpoint with prefix `P` is `P.index` (a table, see `table.py`: key "" holds a
`BundleHeaderProto`, every other key a tensor name → `BundleEntryProto`) and the data shards
`P.data-00000-of-0000N` (tensor bytes, C order, little-endian, packed back to back). A string
tensor is stored as the varint64 length of every element, the masked CRC-32C of those
lengths taken as little-endian uint32 (uint64 above 4 GiB), then all the bytes; the entry's
checksum covers the uint32 lengths, that 4-byte checksum and the bytes. Every other entry's
checksum is the masked CRC-32C of its bytes.

Writes are atomic with one commit point, the rename of the index (`commit.py` argues the
design): the new data never takes a name the committed index refers to, so a reader, or a
writer killed at any step, always finds the previous checkpoint or the new one whole.
"""

from __future__ import annotations

import mmap
import os
import re
import shutil
import threading

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.formats.checkpoint import commit, slices, strings
from tensorweave.formats.checkpoint import crc as crc32c
from tensorweave.formats.checkpoint.table import TableBuilder, read_table
from tensorweave.proto import tensor_bundle_pb2, tensor_shape_pb2

HEADER_KEY = b""
BUNDLE_VERSION = 1       # TF's kTensorBundleVersion
BUNDLE_MIN_CONSUMER = 0  # TF's kTensorBundleMinConsumer
_CHUNK = 16 << 20  # I/O and checksums go chunk by chunk, overlapped, while cache-hot
_MAP_MIN = 1 << 20  # `mapped` reads map tensors from this size up
_RAW_STORAGE = {"bfloat16": np.uint16, "qint8": np.int8, "quint8": np.uint8,
                "qint16": np.int16, "quint16": np.uint16, "qint32": np.int32}
_SUFFIX = re.compile(r"\.(index|meta|data-\d{5}-of-\d{5})$")


# -- file names ------------------------------------------------------------------------------
def data_filename(prefix: str, shard: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_filename(prefix: str) -> str:
    return f"{prefix}.index"


def normalize_prefix(path) -> str:
    """The checkpoint prefix of `path`: `P.index`, `P.data-…` and `P.meta` all give `P`."""
    return _SUFFIX.sub("", os.fspath(path))


_temp_name = commit.temp_name
_remove_quietly = commit.remove_quietly


# -- dtypes ----------------------------------------------------------------------------------
def storage_dtype(dtype: dtypes.DType) -> np.dtype:
    """The little-endian numpy dtype whose bytes a checkpoint stores for `dtype`.

    bfloat16 maps to ml_dtypes' bfloat16 when installed, else to its uint16 bit patterns
    (as do the quantized types to their integer layouts).

    Raises:
      UnimplementedError: string, resource or variant (no fixed-size layout).
    """
    base = dtype.base_dtype
    if base == dtypes.string or base.name in ("resource", "variant"):
        raise errors.UnimplementedError(None, None, f"{base.name} has no fixed-size layout")
    try:
        np_dtype = base.np_dtype
    except TypeError:
        np_dtype = np.dtype(_RAW_STORAGE[base.name])
    return np_dtype.newbyteorder("<") if np_dtype.byteorder == ">" else np_dtype


def _infer_dtype(array: np.ndarray) -> dtypes.DType:
    if array.dtype.kind in "OSU":
        return dtypes.string
    try:
        return dtypes.as_dtype(array.dtype)
    except TypeError:
        raise errors.InvalidArgumentError(
            None, None, f"No checkpoint dtype for numpy dtype {array.dtype}") from None


def _shape_proto(shape) -> tensor_shape_pb2.TensorShapeProto:
    return tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(d)) for d in shape])


# -- writing ---------------------------------------------------------------------------------
class BundleWriter:
    """Writes one single-shard V2 checkpoint. Use as a context manager, or call `finish()`.

    Example:
        with BundleWriter("/tmp/model.ckpt-1") as w:
            w.add("dense/kernel", np.ones((3, 2), np.float32))

    The prefix's directory is created when missing, one level only (as TF's SaveV2: its
    parent must exist). Raises (constructor) the errno's TF class (`errors.from_os_error`):
    NotFoundError (a missing parent), PermissionDeniedError, FailedPreconditionError (a file
    where a directory should be), ...

    `finish` commits atomically (see `commit.py`): replacing a checkpoint at `prefix`, the
    previous one stays readable until the index rename, the new one from then on. Leaving the
    `with` block by an exception (or calling `abort()`) removes the temporary files and
    leaves any previous checkpoint at `prefix` untouched. Opening a writer removes what killed
    saves left in the directory (`commit.sweep`). Not thread-safe.
    """

    def __init__(self, prefix):
        self._prefix = os.fspath(prefix)
        self._tmp_data = _temp_name(data_filename(self._prefix, 0, 1))
        self._entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto] = {}
        self._offset = 0
        self._done = False
        parent = os.path.dirname(self._prefix)
        try:
            _make_parent(parent)
            commit.sweep(self._prefix)
            self._f = open(self._tmp_data, "wb", buffering=0)
        except OSError as e:
            raise errors.from_os_error(e, f"Failed to create checkpoint file "
                                          f"{data_filename(self._prefix, 0, 1)}") from e

    @property
    def prefix(self) -> str:
        return self._prefix

    def add(self, name, value, dtype: dtypes.DType | None = None) -> None:
        """Appends tensor `name` (str or bytes) holding `value` (array-like).

        Raises:
          InvalidArgumentError: an empty or duplicate name, or a value whose numpy dtype is
            not `dtype`'s storage dtype.
        """
        key = name.encode() if isinstance(name, str) else bytes(name)
        if not key or key in self._entries:
            raise errors.InvalidArgumentError(
                None, None, f"Adding duplicate or empty tensor name {key.decode()!r} to "
                            f"checkpoint {self._prefix}")
        array = np.asarray(value)
        dtype = _infer_dtype(array) if dtype is None else dtypes.as_dtype(dtype).base_dtype
        if dtype == dtypes.string:
            size, checksum = self._write_strings(array)
        else:
            size, checksum = self._write_numeric(self._as_storage(key, array, dtype))
        self._entries[key] = tensor_bundle_pb2.BundleEntryProto(
            dtype=dtype.as_datatype_enum, shape=_shape_proto(array.shape), shard_id=0,
            offset=self._offset, size=size, crc32c=crc32c.mask(checksum))
        self._offset += size

    def add_slice(self, name: str, spec: str, value, dtype: dtypes.DType | None = None) -> None:
        """Appends `value` as a slice of tensor `name` (TF's BundleWriter::AddSlice): its bytes
        under the slice key, the slice on `name`'s entry. `spec` is SaveV2's shape_and_slice
        text ("10 3 0,5:-": full shape, then the slice; see `slices.py`).

        Raises:
          InvalidArgumentError: as `add`; a malformed spec; `value`'s shape is not the
            slice's; `name` holds a whole tensor, or slices of another shape or dtype.
        """
        full_shape, part = slices.parse_shape_and_slice(spec)
        array = np.asarray(value)
        want = part.shape(full_shape)
        if list(array.shape) != want:
            raise errors.InvalidArgumentError(
                None, None, f"Slice of {name!r} has shape {list(array.shape)}, but its "
                            f"shape_and_slice says {want}")
        dtype = _infer_dtype(array) if dtype is None else dtypes.as_dtype(dtype).base_dtype
        self.add(part.key(name), array, dtype)
        self._full_entry(name, full_shape, dtype).slices.append(part.to_proto())

    def _full_entry(self, name: str, full_shape, dtype) -> tensor_bundle_pb2.BundleEntryProto:
        key = name.encode()
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = tensor_bundle_pb2.BundleEntryProto(
                dtype=dtype.as_datatype_enum, shape=_shape_proto(full_shape))
        elif not entry.slices or entry.dtype != dtype.as_datatype_enum or \
                [d.size for d in entry.shape.dim] != list(full_shape):
            raise errors.InvalidArgumentError(
                None, None, f"Slices of {name!r} disagree with what checkpoint "
                            f"{self._prefix} already holds under that name")
        return entry

    def _as_storage(self, key: bytes, array: np.ndarray, dtype: dtypes.DType) -> np.ndarray:
        want = storage_dtype(dtype)
        if array.dtype.newbyteorder("<") != want.newbyteorder("<"):
            raise errors.InvalidArgumentError(
                None, None, f"Tensor {key.decode()!r} is declared {dtype.name} but holds numpy "
                            f"{array.dtype}")
        return np.ascontiguousarray(array, dtype=want)

    def _write_numeric(self, array: np.ndarray) -> tuple[int, int]:
        """Writes the bytes with no copy; each chunk's checksum runs beside its write."""
        flat = array.reshape(-1).view(np.uint8)
        if flat.nbytes <= _CHUNK:
            self._write(memoryview(flat))
            return flat.nbytes, crc32c.extend_array(0, flat)
        pipe, view = crc32c.ChecksumPipe(), memoryview(flat)
        try:
            for start in range(0, flat.nbytes, _CHUNK):
                pipe.add(flat[start:start + _CHUNK])
                self._write(view[start:start + _CHUNK])
        finally:
            checksum = pipe.value()
        return flat.nbytes, checksum

    def _write_strings(self, array: np.ndarray) -> tuple[int, int]:
        data, checksum = strings.encode(array.reshape(-1))
        self._write(data)
        return len(data), checksum

    def _write(self, data) -> None:
        view = memoryview(data)
        while view:
            n = self._f.write(view)
            view = view[n:]

    def finish(self) -> None:
        """Writes the index, then commits data and index (`commit.commit`).

        Raises:
          OSError (after removing the temporary files) when a file cannot be written.
        """
        if self._done:
            return
        self._done = True
        tmp_index = _temp_name(index_filename(self._prefix))
        try:
            self._f.close()
            num_shards = commit.layout(self._prefix, 1)
            with open(tmp_index, "wb") as f:
                write_index(f, self._entries, num_shards)
            moves = [(self._tmp_data, data_filename(self._prefix, 0, num_shards))]
            commit.commit(self._prefix, tmp_index, moves, num_shards, 1)
        except BaseException:
            _remove_quietly(self._tmp_data)
            _remove_quietly(tmp_index)
            raise

    def abort(self) -> None:
        """Removes the temporary data file; nothing at `prefix` changes."""
        if not self._done:
            self._done = True
            self._f.close()
            _remove_quietly(self._tmp_data)

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.finish()
        else:
            self.abort()


def _make_parent(parent: str) -> None:
    """Creates `parent`, one level, as TF's SaveV2 (its own parent must exist); a file in
    its place is left for the data file's open to fail on (ENOTDIR), as in TF."""
    if parent and not os.path.isdir(parent):
        try:
            os.mkdir(parent)
        except FileExistsError:
            pass


def write_index(f, entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto],
                num_shards: int) -> None:
    """Writes the `.index` table: the header under key "", then the entries sorted by name."""
    header = tensor_bundle_pb2.BundleHeaderProto(num_shards=num_shards, endianness=0)
    header.version.producer = BUNDLE_VERSION
    header.version.min_consumer = BUNDLE_MIN_CONSUMER
    table = TableBuilder(f)
    table.add(HEADER_KEY, header.SerializeToString(deterministic=True))
    for key in sorted(entries):
        table.add(key, entries[key].SerializeToString(deterministic=True))
    table.finish()


# -- reading ---------------------------------------------------------------------------------
class BundleReader:
    """Reads a V2 checkpoint: its entries up front, tensor bytes on demand (checksums checked).

    The index and the data files are opened by the constructor, so a reader keeps reading the
    generation it opened even when a save replaces the checkpoint meanwhile.
    Thread-safety: `get_tensor` may be called from several threads at once.

    Raises (constructor):
      NotFoundError: no `prefix.index` file.
      DataLossError: the index is truncated or corrupt (names the file).
      UnimplementedError: a compressed index block or a big-endian checkpoint.
    """

    def __init__(self, prefix):
        self._prefix = normalize_prefix(prefix)
        self._index_path = index_filename(self._prefix)
        try:
            with open(self._index_path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(
                None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                            f"matching files for {self._prefix}") from None
        except OSError as e:
            raise errors.NotFoundError(None, None, f"Cannot read {self._index_path}: {e}") from e
        self.header, self._entries = _parse_index(raw, self._index_path)
        self._fds: dict[int, int] = {}
        self._maps: dict[int, mmap.mmap] = {}
        self._lock = threading.Lock()
        self._open_shards()

    def _open_shards(self) -> None:
        """Opens the data files now, beside the index just read: a save that commits a new
        generation at this prefix and removes the old data files meanwhile cannot take them
        from this reader. A missing file is reported when a tensor in it is read."""
        for shard in sorted({e.shard_id for e in self._entries.values()}):
            try:
                self._fd(shard)
            except errors.NotFoundError:
                pass

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def num_shards(self) -> int:
        return self.header.num_shards

    def names(self) -> list[str]:
        """Tensor names, sorted; a sliced tensor by its full name, never its slice keys."""
        return [n for n in self._entries if not slices.is_slice_key(n)]

    def keys(self) -> list[str]:
        """Every key of the index (slice keys included), sorted."""
        return list(self._entries)

    def entry(self, name: str) -> tensor_bundle_pb2.BundleEntryProto:
        """Raises NotFoundError when `name` is not in the checkpoint."""
        e = self._entries.get(name)
        if e is None:
            raise errors.NotFoundError(None, None,
                                       f"Key {name} not found in checkpoint {self._prefix}")
        return e

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def dtype(self, name: str) -> dtypes.DType:
        return dtypes.as_dtype(self.entry(name).dtype)

    def shape(self, name: str) -> list[int]:
        return [d.size for d in self.entry(name).shape.dim]

    def get_tensor(self, name: str, mapped: bool = False) -> np.ndarray:
        """A new array holding tensor `name` (strings: an object array of bytes).

        With `mapped`, a large numeric tensor comes back as a writeable copy-on-write memory
        map of the data file instead (no read into fresh memory: for callers that copy it
        anyway, as RestoreV2 → Assign does). Writes to it never reach the file; the file must
        not be truncated in place while the array lives (checkpoint writers, ours and TF's,
        replace files by renaming and never do).

        Raises:
          NotFoundError: unknown name or a missing data file.
          DataLossError: the data file is truncated, or a checksum does not match.
          DataLossError: also, the saved slices of a sliced tensor do not cover it.
        """
        entry = self.entry(name)
        if entry.slices:
            return self._assemble(name, entry)
        dtype = dtypes.as_dtype(entry.dtype)
        shape = tuple(d.size for d in entry.shape.dim)
        if dtype == dtypes.string:
            return self._read_strings(name, entry, shape)
        if mapped and entry.size >= _MAP_MIN:
            return self._map_numeric(name, entry, dtype, shape)
        return self._read_numeric(name, entry, dtype, shape)

    def get_slice(self, name: str, spec: str) -> np.ndarray:
        """The slice of tensor `name` that RestoreV2's shape_and_slice text `spec` names,
        whether the tensor was saved whole or in slices (any slicing).

        Raises: as `get_tensor`; InvalidArgumentError on a malformed spec or when the stored
        shape is not the spec's full shape.
        """
        full_shape, part = slices.parse_shape_and_slice(spec)
        stored = self.shape(name)
        if stored != list(full_shape):
            raise errors.InvalidArgumentError(
                None, None, f"tensor_name = {name}; shape in shape_and_slice spec "
                            f"{list(full_shape)} does not match the shape stored in checkpoint: "
                            f"{stored} (checkpoint {self._prefix})")
        entry = self.entry(name)
        if not entry.slices:
            return self.get_tensor(name)[part.index(stored)]
        return self._gather_slices(name, entry, part.bounds(stored))

    def _gather_slices(self, name: str, entry, want) -> np.ndarray:
        """The region `want` ((start, stop) per dimension) of a sliced tensor, copied from
        each saved slice that overlaps it; only those slices are read.

        Raises: DataLossError when the saved slices do not cover the region.
        """
        full = [d.size for d in entry.shape.dim]
        dtype = dtypes.as_dtype(entry.dtype)
        out = np.empty([b - a for a, b in want],
                       object if dtype == dtypes.string else storage_dtype(dtype))
        covered = 0
        for proto in entry.slices:
            part = slices.Slice.from_proto(proto, len(full))
            have = part.bounds(full)
            overlap = [(max(a, c), min(b, d)) for (a, b), (c, d) in zip(want, have)]
            if any(a >= b for a, b in overlap):
                continue
            value = self.get_tensor(part.key(name).decode("utf-8", "surrogateescape"))
            out[tuple(slice(a - w, b - w) for (a, b), (w, _) in zip(overlap, want))] = \
                value[tuple(slice(a - h, b - h) for (a, b), (h, _) in zip(overlap, have))]
            covered += int(np.prod([b - a for a, b in overlap], dtype=np.int64))
        if covered != out.size:
            raise errors.DataLossError(
                None, None, f"{self._prefix}: the saved slices of {name} cover {covered} of "
                            f"the {out.size} elements asked for")
        return out

    def _assemble(self, name: str, entry) -> np.ndarray:
        """The full tensor of a sliced entry, put together from its slices."""
        return self._gather_slices(name, entry, [(0, d.size) for d in entry.shape.dim])

    def _read_numeric(self, name, entry, dtype, shape) -> np.ndarray:
        out = np.empty(shape, storage_dtype(dtype))
        if out.nbytes != entry.size:
            raise self._loss(entry, f"entry for {name} has {entry.size} bytes, but its "
                                    f"shape {list(shape)} and dtype {dtype.name} need "
                                    f"{out.nbytes}")
        flat = out.reshape(-1).view(np.uint8)
        view, pipe = memoryview(flat), crc32c.ChecksumPipe()
        try:
            for start in range(0, flat.nbytes, _CHUNK):
                self._pread(entry, view[start:start + _CHUNK], start)
                pipe.add(flat[start:start + _CHUNK])
        finally:
            checksum = pipe.value()
        self._check(name, entry, checksum)
        return out

    def get_tensors(self, names: list[str], mapped: bool = False) -> list[np.ndarray]:
        """`get_tensor` of each name; the checksums of mapped tensors run in parallel.

        Raises: as `get_tensor`.
        """
        out, views = [], []
        for name in names:
            entry = self.entry(name)
            dtype = dtypes.as_dtype(entry.dtype)
            if mapped and entry.size >= _MAP_MIN and not entry.slices and \
                    dtype != dtypes.string:
                array, flat = self._mapped_view(name, entry, dtype)
                views.append((name, entry, flat))
                out.append(array)
            else:
                out.append(self.get_tensor(name))
        for (name, entry, _), actual in zip(views, crc32c.checksums([v[2] for v in views])):
            self._check(name, entry, actual)
        return out

    def _map_numeric(self, name, entry, dtype, shape) -> np.ndarray:
        array, flat = self._mapped_view(name, entry, dtype)
        self._check(name, entry, crc32c.extend_array(0, flat))
        return array

    def _mapped_view(self, name, entry, dtype) -> tuple[np.ndarray, np.ndarray]:
        """(the tensor, its bytes) as views of the shard's map; checksum not yet checked."""
        np_dtype = storage_dtype(dtype)
        shape = tuple(d.size for d in entry.shape.dim)
        need = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
        if need != entry.size:
            raise self._loss(entry, f"entry for {name} has {entry.size} bytes, but its shape "
                                    f"{list(shape)} and dtype {dtype.name} need {need}")
        m = self._map(entry.shard_id)
        if len(m) < entry.offset + entry.size:
            raise self._loss(entry, f"truncated: needed {entry.size} bytes at offset "
                                    f"{entry.offset}, the file has {len(m)} bytes")
        flat = np.frombuffer(m, np.uint8, count=entry.size, offset=entry.offset)
        return flat.view(np_dtype).reshape(shape), flat

    def _map(self, shard: int) -> mmap.mmap:
        """One copy-on-write map of the whole data file per shard (one file descriptor, however
        many tensors view it); it lives as long as some array does."""
        fd = self._fd(shard)
        with self._lock:
            m = self._maps.get(shard)
            if m is None:
                if os.fstat(fd).st_size == 0:
                    raise errors.DataLossError(None, None, f"{self._data_path(shard)}: "
                                                           "truncated: the file is empty")
                m = self._maps[shard] = mmap.mmap(fd, 0, access=mmap.ACCESS_COPY)
            return m

    def _read_strings(self, name, entry, shape) -> np.ndarray:
        buf = bytearray(entry.size)
        self._pread(entry, memoryview(buf))
        n = int(np.prod(shape, dtype=np.int64))
        try:
            values, checksum = strings.decode(bytes(buf), n)
        except ValueError as e:
            raise self._loss(entry, f"string tensor {name}: {e}") from None
        self._check(name, entry, checksum)
        return values.reshape(shape)

    def _check(self, name: str, entry, actual: int) -> None:
        if crc32c.unmask(entry.crc32c) != actual:
            raise self._loss(entry, f"Checksum does not match for tensor {name}: stored "
                                    f"{crc32c.unmask(entry.crc32c)} vs. calculated on the "
                                    f"restored bytes {actual}")

    def _data_path(self, shard: int) -> str:
        return data_filename(self._prefix, shard, self.header.num_shards)

    def _loss(self, entry, what: str) -> errors.DataLossError:
        return errors.DataLossError(None, None, f"{self._data_path(entry.shard_id)}: {what}")

    def _fd(self, shard: int) -> int:
        with self._lock:
            fd = self._fds.get(shard)
            if fd is None:
                path = self._data_path(shard)
                try:
                    fd = self._fds[shard] = os.open(path, os.O_RDONLY)
                except FileNotFoundError:
                    raise errors.NotFoundError(
                        None, None, f"Checkpoint data file {path} does not exist") from None
            return fd

    def _pread(self, entry, view: memoryview, skip: int = 0) -> None:
        """Fills `view` from the entry's bytes from `skip` on. Raises DataLossError when the
        file is too short."""
        fd, pos, done = self._fd(entry.shard_id), entry.offset + skip, 0
        while done < len(view):
            n = _pread_into(fd, view[done:], pos + done)
            if n <= 0:
                raise self._loss(entry, f"truncated: needed {entry.size} bytes at offset "
                                        f"{entry.offset}, found {skip + done} (file too short)")
            done += n

    def close(self) -> None:
        """Closes the data files. Mapped arrays stay valid (their map is dropped, not
        closed)."""
        with self._lock:
            fds, self._fds, self._maps = list(self._fds.values()), {}, {}
        for fd in fds:
            os.close(fd)

    def __enter__(self) -> BundleReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - best effort at interpreter shutdown
            pass


def _pread_into(fd: int, view: memoryview, offset: int) -> int:
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], offset)
    data = os.pread(fd, len(view), offset)
    view[:len(data)] = data
    return len(data)


def _parse_index(raw: bytes, path: str):
    """(header, {name: entry}) of an index file's bytes. Raises DataLossError/Unimplemented."""
    items = read_table(raw, path)
    if not items or items[0][0] != HEADER_KEY:
        raise errors.DataLossError(None, None, f"{path}: no bundle header entry (not a "
                                               "checkpoint index?)")
    header = _parse(tensor_bundle_pb2.BundleHeaderProto, items[0][1], path, "header")
    if header.endianness != 0:
        raise errors.UnimplementedError(
            None, None, f"{path}: big-endian checkpoints are not supported")
    if header.version.min_consumer > BUNDLE_VERSION:
        raise errors.InvalidArgumentError(
            None, None, f"{path}: checkpoint needs bundle version >= "
                        f"{header.version.min_consumer}; this reader is {BUNDLE_VERSION}")
    entries = {}
    for key, value in items[1:]:
        name = key.decode("utf-8", "surrogateescape")
        entries[name] = _parse(tensor_bundle_pb2.BundleEntryProto, value, path, name)
    return header, entries


def _parse(cls, data: bytes, path: str, what: str):
    try:
        return cls.FromString(data)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise errors.DataLossError(None, None, f"{path}: cannot parse entry {what!r}") from None


# -- merging (MergeV2Checkpoints) ------------------------------------------------------------
def merge_bundles(prefixes, destination: str, delete_old_dirs: bool = True,
                  allow_missing_files: bool = False) -> None:
    """Merges the bundles `prefixes` into one at `destination` (TF's MergeBundles).

    Data files are renamed (never copied; hard-linked when a source is `destination` itself)
    to `destination.data-i-of-n`, and the merged index commits atomically as `BundleWriter`'s
    (`commit.py`: a checkpoint already at `destination` stays readable until then). The old
    index files are deleted, and with `delete_old_dirs` their directories too when empty.

    Raises:
      NotFoundError: a bundle is missing (unless `allow_missing_files`), or all are.
      InvalidArgumentError: two bundles hold the same tensor name.
    """
    readers = _present_bundles(prefixes, allow_missing_files)
    total = sum(r.num_shards for r in readers)
    entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto] = {}
    sources, base = [], 0
    for r in readers:
        for name in r.keys():
            _merge_entry(entries, name, r.entry(name), base, r.prefix)
        sources += [data_filename(r.prefix, i, r.num_shards) for i in range(r.num_shards)]
        base += r.num_shards
        r.close()
    _finish_merge(readers, sources, entries, destination, total, delete_old_dirs)


def _merge_entry(entries, name: str, entry, base: int, prefix: str) -> None:
    """Adds one bundle's entry; the slices of a tensor saved by several shards join up (as
    TF's MergeBundles). Raises InvalidArgumentError on a duplicate or disagreeing name."""
    key = name.encode("utf-8", "surrogateescape")
    have = entries.get(key)
    if have is not None:
        if not (have.slices and entry.slices and have.dtype == entry.dtype
                and have.shape == entry.shape):
            raise errors.InvalidArgumentError(
                None, None, f"Duplicate tensor key {name} while merging {prefix}")
        have.slices.extend(entry.slices)
        return
    e = tensor_bundle_pb2.BundleEntryProto()
    e.CopyFrom(entry)
    if not e.slices:
        e.shard_id += base
    entries[key] = e


def _present_bundles(prefixes, allow_missing: bool) -> list[BundleReader]:
    readers = []
    for p in prefixes:
        if allow_missing and not os.path.exists(index_filename(p)):
            continue
        readers.append(BundleReader(p))
    if not readers:
        raise errors.NotFoundError(None, None, f"No checkpoint files found among {prefixes}")
    return readers


def _finish_merge(readers, sources, entries, destination, total, delete_old_dirs) -> None:
    parent = os.path.dirname(destination)
    if parent:
        os.makedirs(parent, exist_ok=True)
    commit.sweep(destination, keep={os.path.dirname(r.prefix) for r in readers})
    num_shards = commit.layout(destination, total)
    moves = [(_movable(src, destination), data_filename(destination, i, num_shards))
             for i, src in enumerate(sources)]
    tmp = _temp_name(index_filename(destination))
    try:
        with open(tmp, "wb") as f:
            write_index(f, entries, num_shards)
        commit.commit(destination, tmp, moves, num_shards, total)
    except BaseException:
        _remove_quietly(tmp)
        raise
    for r in readers:
        if os.path.abspath(r.prefix) != os.path.abspath(destination):
            _remove_quietly(index_filename(r.prefix))
    if delete_old_dirs:
        for d in {os.path.dirname(r.prefix) for r in readers}:
            try:
                os.rmdir(d)
            except OSError:
                pass  # NOTE: best effort, as TF: a directory that is not empty stays


def _movable(src: str, destination: str) -> str:
    """`src`, or a hard link (else a copy) of it when it belongs to the checkpoint committed
    at `destination`, which must stay whole until the commit."""
    if normalize_prefix(os.path.abspath(src)) != os.path.abspath(destination):
        return src
    tmp = _temp_name(src)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    return tmp


__all__ = ["BundleWriter", "BundleReader", "merge_bundles", "data_filename", "index_filename",
           "normalize_prefix", "storage_dtype", "write_index"]
