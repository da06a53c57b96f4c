"""CPU kernels of the lookup-table ops (TF's `lookup_table_op.cc`, `lookup_util.cc`).

A `Table` lives in the device's resource container (shared by `shared_name`, or by node
name with `use_node_name_sharing`, else one per node and session) and flows as the value of
the table's `resource` handle. A static `HashTableV2` is filled once by an initializer op
(running it again with the same data is a no-op, with other data a FailedPreconditionError,
as TF); a mutable table takes inserts and removes. Finding a missing key gives the default.
Thread-safety: every method takes the table's lock.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.fingerprint import legacy_hash64
from tensorweave.runtime.kernels.registry import register_kernel


def _precondition(msg: str) -> errors.FailedPreconditionError:
    return errors.FailedPreconditionError(None, None, msg)


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


def _key(v):
    if isinstance(v, (bytes, str)):
        return v.encode() if isinstance(v, str) else v
    return v.item() if hasattr(v, "item") else v


def _value(v):
    """A stored value: a Python scalar (bytes, int, float) or a copied array."""
    if isinstance(v, (bytes, str, int, float)):
        return v
    return v.item() if np.ndim(v) == 0 else np.array(v)


class Table:
    """A hash table of keys to values (scalars, or arrays of `value_shape`)."""

    def __init__(self, name: str, key_dtype, value_dtype, mutable: bool, value_shape=()):
        self.name = name
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.mutable = mutable
        self.value_shape = tuple(value_shape)
        self.data: dict = {}
        self.initialized = mutable
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Table {self.name} size={len(self.data)}>"

    # -- checks -----------------------------------------------------------------------------
    def check_types(self, key_dtype, value_dtype=None) -> None:
        if key_dtype is not None and key_dtype != self.key_dtype:
            raise _invalid(f"Conflicting key type: table {self.name} has keys of "
                           f"{self.key_dtype.name}, the op passes {key_dtype.name}")
        if value_dtype is not None and value_dtype != self.value_dtype:
            raise _invalid(f"Conflicting value type: table {self.name} has values of "
                           f"{self.value_dtype.name}, the op passes {value_dtype.name}")

    def _pairs(self, keys, values):
        k = np.asarray(keys)
        v = np.asarray(values)
        if v.shape != k.shape + self.value_shape:
            raise _invalid(f"Expected shape {list(k.shape + self.value_shape)} for value, "
                           f"got {list(v.shape)}")
        flat_v = v.reshape((k.size,) + self.value_shape)
        return [(_key(a), _value(flat_v[i])) for i, a in enumerate(k.reshape(-1))]

    # -- static tables ----------------------------------------------------------------------
    def initialize(self, keys, values) -> None:
        pairs = self._pairs(keys, values)
        with self.lock:
            if self.initialized:
                if not self._same(pairs):
                    raise _precondition("Table was already initialized with different data.")
                return
            data: dict = {}
            for k, v in pairs:
                if k in data and not np.array_equal(data[k], v):
                    raise _precondition(f"HashTable has different value for same key. Key "
                                        f"{k!r} has {data[k]!r} and trying to add value {v!r}")
                data[k] = v
            self.data, self.initialized = data, True

    def _same(self, pairs) -> bool:
        return len({k for k, _ in pairs}) == len(self.data) and all(
            k in self.data and np.array_equal(self.data[k], v) for k, v in pairs)

    # -- reads ------------------------------------------------------------------------------
    def find(self, keys, default):
        k = np.asarray(keys)
        d = np.asarray(default)
        dv = _value(d)
        if d.shape != self.value_shape:
            raise _invalid(f"Expected shape {list(self.value_shape)} for default value, got "
                           f"{list(d.shape)}")
        with self.lock:
            if not self.initialized:
                raise _precondition(f"Table not initialized. (table {self.name})")
            got = [self.data.get(_key(a), dv) for a in k.reshape(-1)]
        dt = self.value_dtype.np_dtype if self.value_dtype.name != "string" else object
        out = np.empty((k.size,) + self.value_shape, dtype=dt)
        for i, v in enumerate(got):
            out[i] = v
        return out.reshape(k.shape + self.value_shape)

    def size(self) -> np.ndarray:
        with self.lock:
            return np.int64(len(self.data) if self.initialized else 0)

    def export(self):
        with self.lock:
            items = list(self.data.items())
        kd = object if self.key_dtype.name == "string" else self.key_dtype.np_dtype
        vd = object if self.value_dtype.name == "string" else self.value_dtype.np_dtype
        keys = np.array([k for k, _ in items], dtype=kd)
        values = np.empty((len(items),) + self.value_shape, dtype=vd)
        for i, (_, v) in enumerate(items):
            values[i] = v
        return keys, values

    # -- mutable tables ---------------------------------------------------------------------
    def _check_mutable(self, what: str) -> None:
        if not self.mutable:
            raise _invalid(f"{what} is not supported by the static HashTable {self.name}")

    def insert(self, keys, values) -> None:
        self._check_mutable("Insert")
        pairs = self._pairs(keys, values)
        with self.lock:
            for k, v in pairs:
                self.data[k] = v

    def import_(self, keys, values) -> None:
        if not self.mutable:
            self.initialize(keys, values)
            return
        pairs = self._pairs(keys, values)
        with self.lock:
            self.data = dict(pairs)

    def remove(self, keys) -> None:
        self._check_mutable("Remove")
        with self.lock:
            for a in np.asarray(keys).reshape(-1):
                self.data.pop(_key(a), None)


def _table_factory(mutable: bool, with_shape: bool = False):
    def factory(node):
        shared = node.attr("shared_name") or (
            node.name if node.attr("use_node_name_sharing") else "")
        key = shared or f"_table/{node.name}"
        shape = tuple(node.attr("value_shape").as_tuple()) if with_shape else ()

        def create():
            return Table(shared or node.name, node.attr("key_dtype"), node.attr("value_dtype"),
                         mutable, shape)
        if node.resources is None:
            table = create()
        else:
            table = node.resources.lookup_or_create(node.attr("container") or "", key, create)
        if not isinstance(table, Table):
            raise _invalid(f"Resource '{key}' is not a lookup table")
        table.check_types(node.attr("key_dtype"), node.attr("value_dtype"))
        return lambda: table
    return factory


register_kernel("HashTableV2")(_table_factory(False))
register_kernel("MutableHashTableV2")(_table_factory(True))
register_kernel("MutableHashTableOfTensorsV2")(_table_factory(True, with_shape=True))


class DenseTable(Table):
    """A MutableDenseHashTable as TF's lookup_table_op.cc keeps it: open addressing over
    power-of-2 bucket arrays (`key_buckets` [n, 1], `value_buckets` [n, value size]) with
    quadratic probing, a key's bucket `hash & (n - 1)` (an integer key is its own hash, a
    string TF's Hash64), unused buckets holding `empty_key`, removed ones `deleted_key`; an
    insert that would pass `max_load_factor` doubles the buckets first. Export and import
    move the arrays as they are, so checkpoints are TF's, bucket for bucket."""

    def __init__(self, name, key_dtype, value_dtype, value_shape, empty_key, deleted_key,
                 num_buckets: int, max_load_factor: float):
        super().__init__(name, key_dtype, value_dtype, True, value_shape)
        self.empty_key, self.deleted_key = _key(empty_key), _key(deleted_key)
        if self.empty_key == self.deleted_key:
            raise _invalid("Empty and deleted keys cannot be equal")
        if num_buckets < 4 or num_buckets & (num_buckets - 1):
            raise _invalid(f"Number of buckets must be at least 4 and a power of 2, got "
                           f"{num_buckets}")
        if not 0 < max_load_factor < 1:
            raise _invalid(f"max_load_factor must be between 0 and 1, got {max_load_factor}")
        self.max_load_factor = max_load_factor
        self.width = int(np.prod(self.value_shape)) if self.value_shape else 1
        self._allocate(num_buckets)

    def _np(self, dtype):
        return object if dtype.name == "string" else dtype.np_dtype

    def _allocate(self, n: int) -> None:
        self.keys = np.empty((n, 1), dtype=self._np(self.key_dtype))
        self.keys[:] = self.empty_key
        vd = self._np(self.value_dtype)
        self.values = np.full((n, self.width), b"", dtype=object) if vd is object else \
            np.zeros((n, self.width), dtype=vd)
        self.num_entries = 0

    def _hash(self, k) -> int:
        if isinstance(k, bytes):
            return legacy_hash64(k)
        return int(k) & 0xFFFFFFFFFFFFFFFF

    def _reserved(self, k, skip: bool) -> bool:
        for reserved, what in ((self.empty_key, "empty_key"), (self.deleted_key, "deleted_key")):
            if k == reserved:
                if skip:
                    return True
                raise _invalid(f"Using the {what} as a table key is not allowed")
        return False

    def _probe(self, k):
        """Buckets in TF's probe order for key `k`."""
        n = self.keys.shape[0]
        index, probes = self._hash(k) & (n - 1), 0
        while probes < n:
            yield index
            probes += 1
            index = (index + probes) & (n - 1)
        raise errors.InternalError(None, None, "Internal error in MutableDenseHashTable")

    def _insert_one(self, k, v) -> None:
        for b in self._probe(k):
            held = _key(self.keys[b, 0])
            if held == k:
                self.values[b] = v
                return
            if held in (self.empty_key, self.deleted_key):
                self.num_entries += 1
                self.keys[b, 0] = k
                self.values[b] = v
                return

    def _do_insert(self, keys, values, skip_reserved: bool) -> None:
        for k, v in zip(keys, values):
            if not self._reserved(k, skip_reserved):
                self._insert_one(k, v)

    def _flat(self, keys, values=None):
        ks = [_key(a) for a in np.asarray(keys).reshape(-1)]
        if values is None:
            return ks
        v = np.asarray(values)
        if v.shape != np.asarray(keys).shape + self.value_shape:
            raise _invalid(f"Expected shape {list(np.asarray(keys).shape + self.value_shape)} "
                           f"for value, got {list(v.shape)}")
        return ks, v.reshape(len(ks), self.width)

    def insert(self, keys, values) -> None:
        ks, vs = self._flat(keys, values)
        with self.lock:
            pending = self.num_entries + len(ks)
            n = self.keys.shape[0]
            if pending > n * self.max_load_factor:
                while pending > n * self.max_load_factor:
                    n *= 2
                old_k, old_v = self.keys, self.values
                self._allocate(n)
                self._do_insert([_key(a) for a in old_k[:, 0]], old_v, True)
            self._do_insert(ks, vs, False)

    def remove(self, keys) -> None:
        with self.lock:
            for k in self._flat(keys):
                self._reserved(k, False)
                for b in self._probe(k):
                    held = _key(self.keys[b, 0])
                    if held == k:
                        self.keys[b, 0] = self.deleted_key
                        self.num_entries -= 1
                        break
                    if held == self.empty_key:
                        break

    def find(self, keys, default):
        k = np.asarray(keys)
        d = np.asarray(default)
        if d.shape != self.value_shape:
            raise _invalid(f"Expected shape {list(self.value_shape)} for default value, got "
                           f"{list(d.shape)}")
        out = np.empty((k.size, self.width), dtype=self.values.dtype)
        with self.lock:
            for i, key in enumerate(self._flat(keys)):
                self._reserved(key, False)
                out[i] = d.reshape(self.width)
                for b in self._probe(key):
                    held = _key(self.keys[b, 0])
                    if held == key:
                        out[i] = self.values[b]
                        break
                    if held == self.empty_key:
                        break
        return out.reshape(k.shape + self.value_shape)

    def size(self):  # NOTE: an int64 scalar
        with self.lock:
            return np.int64(self.num_entries)

    def export(self):
        with self.lock:
            return self.keys.copy(), self.values.copy()

    def import_(self, keys, values) -> None:
        """Adopts bucket arrays (TF's export layout) as they are."""
        k, v = np.asarray(keys), np.asarray(values)
        n = k.shape[0] if k.ndim else 0
        if n < 1 or n & (n - 1):
            raise _invalid(f"Expected the number of buckets (the keys' length) to be a power "
                           f"of 2, got {n}")
        if k.size != n or v.size != n * self.width:
            raise _invalid(f"Expected keys of shape [{n}, 1] and values of [{n}, "
                           f"{self.width}], got {list(k.shape)} and {list(v.shape)}")
        with self.lock:
            self.keys = k.reshape(n, 1).astype(self.keys.dtype, copy=True)
            self.values = v.reshape(n, self.width).astype(self.values.dtype, copy=True)
            self.num_entries = sum(_key(a) not in (self.empty_key, self.deleted_key)
                                   for a in self.keys[:, 0])


@register_kernel("MutableDenseHashTableV2")
def _dense_table(node):
    shared = node.attr("shared_name") or (node.name if node.attr("use_node_name_sharing")
                                          else "")
    key = shared or f"_table/{node.name}"
    shape = tuple(node.attr("value_shape").as_tuple())
    own: dict = {}   # NOTE: the table of this node when there is no resource container

    def run(empty_key, deleted_key):
        def create():
            return DenseTable(shared or node.name, node.attr("key_dtype"),
                              node.attr("value_dtype"), shape, empty_key, deleted_key,
                              int(node.attr("initial_num_buckets")),
                              float(node.attr("max_load_factor")))
        if node.resources is None:
            table = own["table"] if "table" in own else own.setdefault("table", create())
        else:
            table = node.resources.lookup_or_create(node.attr("container") or "", key, create)
        if not isinstance(table, DenseTable):
            raise _invalid(f"Resource '{key}' is not a dense lookup table")
        table.check_types(node.attr("key_dtype"), node.attr("value_dtype"))
        return table
    return run


def _table_of(handle) -> Table:
    if not isinstance(handle, Table):
        raise _invalid(f"Expected a lookup table handle, got {type(handle).__name__}")
    return handle


@register_kernel("LookupTableFindV2")
def _find(node):
    tin, tout = node.attr("Tin"), node.attr("Tout")

    def run(handle, keys, default):
        table = _table_of(handle)
        table.check_types(tin, tout)
        return table.find(keys, default)
    return run


def _writer(method: str, types: tuple[str, str]):
    def factory(node):
        tk, tv = (node.attr(t) for t in types)

        def run(handle, keys, values):
            table = _table_of(handle)
            table.check_types(tk, tv)
            getattr(table, method)(keys, values)
        return run
    return factory


register_kernel("LookupTableInsertV2")(_writer("insert", ("Tin", "Tout")))
register_kernel("LookupTableImportV2")(_writer("import_", ("Tin", "Tout")))
register_kernel("InitializeTableV2")(_writer("initialize", ("Tkey", "Tval")))


@register_kernel("LookupTableRemoveV2")
def _remove(node):
    tin = node.attr("Tin")

    def run(handle, keys):
        table = _table_of(handle)
        table.check_types(tin)
        table.remove(keys)
    return run


@register_kernel("LookupTableSizeV2")
def _size(node):
    return lambda handle: _table_of(handle).size()


@register_kernel("LookupTableExportV2")
def _export(node):
    tk, tv = node.attr("Tkeys"), node.attr("Tvalues")

    def run(handle):
        table = _table_of(handle)
        table.check_types(tk, tv)
        return table.export()
    return run


# -- InitializeTableFromTextFileV2 -----------------------------------------------------------
_WHOLE_LINE, _LINE_NUMBER = -2, -1


def _column(line: bytes, lineno: int, index: int, delimiter: bytes, dtype, filename: str):
    if index == _LINE_NUMBER:
        return np.int64(lineno)
    text = line if index == _WHOLE_LINE else _split(line, index, delimiter, lineno, filename)
    if dtype.name == "string":
        return text
    try:
        return dtype.np_dtype.type(float(text) if dtype.is_floating else int(text))
    except ValueError:
        raise _invalid(f"Field {text.decode(errors='replace')} in line {lineno} is not a "
                       f"valid {dtype.name} (file {filename})") from None


def _split(line, index, delimiter, lineno, filename) -> bytes:
    fields = line.split(delimiter) if delimiter else line.split()
    if index >= len(fields):
        raise _invalid(f"Invalid number of columns in {filename} line {lineno} "
                       f"({line.decode(errors='replace')}) : expected at least {index + 1} "
                       f"got {len(fields)}")
    return fields[index]


def _read_lines(filename: str, vocab_size: int) -> list[bytes]:
    try:
        with open(filename, "rb") as f:
            lines = [ln.rstrip(b"\r\n") for ln in f]
    except OSError as e:
        raise errors.NotFoundError(None, None, f"{filename}; {e.strerror}") from None
    if vocab_size > len(lines):
        raise _invalid(f"Invalid vocab_size in {filename}: expected {vocab_size} but got "
                       f"{len(lines)}")
    return lines if vocab_size < 0 else lines[:vocab_size]


@register_kernel("InitializeTableFromTextFileV2")
def _init_from_file(node):
    ki, vi = node.attr("key_index"), node.attr("value_index")
    vocab, offset = node.attr("vocab_size"), node.attr("offset") or 0
    delim = (node.attr("delimiter") or "").encode()

    def run(handle, filename):
        table = _table_of(handle)
        name = np.asarray(filename, dtype=object).item()
        name = name.decode() if isinstance(name, bytes) else str(name)
        lines = _read_lines(name, vocab)
        keys = [_column(ln, i + offset, ki, delim, table.key_dtype, name)
                for i, ln in enumerate(lines)]
        vals = [_column(ln, i + offset, vi, delim, table.value_dtype, name)
                for i, ln in enumerate(lines)]
        table.initialize(_array(keys, table.key_dtype), _array(vals, table.value_dtype))
    return run


def _array(items: list, dtype) -> np.ndarray:
    return np.array(items, dtype=object if dtype.name == "string" else dtype.np_dtype)
