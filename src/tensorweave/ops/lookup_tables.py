"""TF1's lookup-table classes and helpers (`tf.lookup`, `tf.contrib.lookup`).

A table object owns one table op (`hash_table`, `MutableHashTable` ... as TF names them);
`lookup` adds a `LookupTableFindV2` under `<table>_Lookup`. A static table gets its contents
from an initializer (`KeyValueTensorInitializer`, `TextFileInitializer`) whose op is added to
the `TABLE_INITIALIZERS` collection, which `tables_initializer()` groups. Lookups of keys the
table does not hold give `default_value`; `IdTableWithHashBuckets` (what
`index_table_from_*` return with `num_oov_buckets`) sends them to hash buckets after the
vocabulary instead, with TF's Fingerprint64, so ids match TensorFlow's.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_collection,
    get_default_graph,
)
from tensorweave.framework.operation import Tensor
from tensorweave.framework.saveable import SaveableObject, SaveSpec
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import lookup_ops  # noqa: F401 - registers the ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.array_ops import size as _size
from tensorweave.ops.control_flow_ops import group, no_op
from tensorweave.ops.creation_ops import range as _range
from tensorweave.ops.gather_ops import where
from tensorweave.ops.math_ops import add, cast, not_equal
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.ops.string_hash_ops import string_to_hash_bucket_fast
from tensorweave.ops.string_ops import as_string

__all__ = [
    "HashTable", "IdTableWithHashBuckets", "KeyValueTensorInitializer", "MutableHashTable",
    "StaticHashTable", "StaticVocabularyTable", "TableInitializerBase",
    "TextFileIdTableInitializer",
    "TextFileIndex", "TextFileInitializer", "TextFileStringTableInitializer",
    "index_table_from_file", "index_table_from_tensor", "index_to_string",
    "index_to_string_table_from_file", "index_to_string_table_from_tensor", "tables_initializer",
    "FastHashSpec", "HasherSpec", "StrongHashSpec",
]


class TextFileIndex:
    """Special column indices of `TextFileInitializer`."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class HasherSpec:
    """How `IdTableWithHashBuckets` hashes out-of-vocabulary keys: `fasthash` or `stronghash`
    (with a two-int `key`)."""

    def __init__(self, hasher: str, key=None):
        if hasher not in ("fasthash", "stronghash"):
            raise ValueError(f"hasher must be 'fasthash' or 'stronghash', got {hasher!r}")
        self.hasher, self.key = hasher, key


FastHashSpec = HasherSpec("fasthash")


def StrongHashSpec(key) -> HasherSpec:  # noqa: N802 - TF's name
    if len(key) != 2:
        raise ValueError(f"key must have size 2, got {len(key)}.")
    return HasherSpec("stronghash", list(key))


def _check_keys(table, keys):
    """Keys as a Tensor or SparseTensor of the table's key dtype (TypeError otherwise)."""
    if not isinstance(keys, (SparseTensor, Tensor)):
        keys = convert_to_tensor(keys, dtype=table.key_dtype, name="keys")
    got = keys.values.dtype if isinstance(keys, SparseTensor) else keys.dtype
    if got.base_dtype != table.key_dtype:
        raise TypeError(f"Signature mismatch. Keys must be dtype {table.key_dtype.name}, "
                        f"got {got.base_dtype.name}.")
    return keys


def _on_values(keys, fn):
    """Applies `fn` to a dense tensor, or to a SparseTensor's values (same indices)."""
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, fn(keys.values), keys.dense_shape)
    return fn(keys)


# -- initializers ----------------------------------------------------------------------------
class TableInitializerBase:
    """Fills a static table; `initialize(table)` returns the init op."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    def _check_table(self, table) -> None:
        if (table.key_dtype, table.value_dtype) != (self._key_dtype, self._value_dtype):
            raise TypeError(f"Invalid key/value dtypes for the initializer: table has "
                            f"{table.key_dtype.name}/{table.value_dtype.name}, initializer "
                            f"{self._key_dtype.name}/{self._value_dtype.name}")


class KeyValueTensorInitializer(TableInitializerBase):
    """Initializes a table from a `keys` and a `values` tensor of the same length."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with name_scope(name, "key_value_init", [keys, values]) as scope:
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        self._check_table(table)
        with name_scope(self._name, values=[table.resource_handle, self._keys,
                                            self._values]) as scope:
            op = apply_op("InitializeTableV2", table.resource_handle, self._keys, self._values,
                          name=scope)
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


class TextFileInitializer(TableInitializerBase):
    """Initializes a table from a text file, one entry per line.

    `key_index`/`value_index` pick a column (split by `delimiter`), the whole line
    (`TextFileIndex.WHOLE_LINE`) or the line number (`TextFileIndex.LINE_NUMBER`).
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, offset=0):
        _check_index("key", key_index, key_dtype)
        _check_index("value", value_index, value_dtype)
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self._filename_arg, self._name = filename, name
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter, self._offset = vocab_size, delimiter, offset
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        self._check_table(table)
        with name_scope(self._name, "text_file_init", [table.resource_handle]) as scope:
            filename = convert_to_tensor(self._filename_arg, dtypes.string, name="asset_filepath")
            op = apply_op("InitializeTableFromTextFileV2", table.resource_handle, filename,
                          key_index=self._key_index, value_index=self._value_index,
                          vocab_size=-1 if self._vocab_size is None else self._vocab_size,
                          delimiter=self._delimiter, offset=self._offset, name=scope)
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


def _check_index(what: str, index: int, dtype) -> None:
    dtype = dtypes.as_dtype(dtype)
    if index < -2:
        raise ValueError(f"Invalid {what} index {index}.")
    if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
        raise ValueError(f"Signature mismatch. Keys must be dtype int64, got {dtype.name}."
                         if what == "key" else f"Signature mismatch. Values must be dtype "
                         f"int64, got {dtype.name}.")
    if index == TextFileIndex.WHOLE_LINE and dtype != dtypes.string:
        raise ValueError(f"Signature mismatch. {what.title()}s must be dtype string, got "
                         f"{dtype.name}.")


class TextFileStringTableInitializer(TextFileInitializer):
    """Line number -> whole line (string values)."""

    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t",
                 name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string,
                         value_column_index, vocab_size, delimiter, name)


class TextFileIdTableInitializer(TextFileInitializer):
    """Whole line -> line number (int64 ids)."""

    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t",
                 name="text_file_id_table_init", key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64,
                         value_column_index, vocab_size, delimiter, name)


# -- tables ----------------------------------------------------------------------------------
class _Table:
    """A table op plus lookup/size; subclasses say which op and how it is filled."""

    def __init__(self, key_dtype, value_dtype, name: str):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        self._name = name

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def resource_handle(self):
        return self._handle

    @property
    def default_value(self):
        return self._default_value

    def size(self, name=None):
        with name_scope(name, f"{self._name}_Size", [self._handle]) as scope:
            return apply_op("LookupTableSizeV2", self._handle, name=scope)

    def lookup(self, keys, name=None):
        """Values of `keys` (a Tensor or SparseTensor); missing keys give the default."""
        keys = _check_keys(self, keys)
        with name_scope(name, f"{self._name}_Lookup", [self._handle]) as scope:
            return _on_values(keys, lambda k: apply_op(
                "LookupTableFindV2", self._handle, k, self._default_value, name=scope))


class StaticHashTable(_Table):
    """An immutable table filled by `initializer` (run `tables_initializer()` first)."""

    def __init__(self, initializer, default_value, name=None, shared_name=None):
        super().__init__(initializer.key_dtype, initializer.value_dtype, name or "hash_table")
        self._initializer = initializer
        self._handle = apply_op("HashTableV2", key_dtype=self._key_dtype,
                                value_dtype=self._value_dtype, shared_name=shared_name or "",
                                name=name or "hash_table")
        self._name = self._handle.op.name.split("/")[-1]
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._init_op = initializer.initialize(self)

    @property
    def initializer(self):
        return self._init_op

    init = initializer

    def export(self, name=None):
        with name_scope(name, f"{self._name}_Export", [self._handle]) as scope:
            return apply_op("LookupTableExportV2", self._handle, Tkeys=self._key_dtype,
                            Tvalues=self._value_dtype, name=scope)


class HashTable(StaticHashTable):
    """`tf.contrib.lookup.HashTable` (TF1's name of the static table)."""

    def __init__(self, initializer, default_value, shared_name=None, name=None):
        super().__init__(initializer, default_value, name=name, shared_name=shared_name)


class MutableHashTable(_Table):
    """A table that takes `insert`/`remove`; values may be vectors (`default_value`'s shape)."""

    def __init__(self, key_dtype, value_dtype, default_value, shared_name=None,
                 name="MutableHashTable", checkpoint=True):
        super().__init__(key_dtype, value_dtype, name)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        shape = self._default_value.shape
        sharing = checkpoint and shared_name is None
        kw = dict(key_dtype=self._key_dtype, value_dtype=self._value_dtype,
                  shared_name=shared_name or "", use_node_name_sharing=sharing, name=name)
        if shape.ndims:
            self._handle = apply_op("MutableHashTableOfTensorsV2", value_shape=shape, **kw)
        else:
            self._handle = apply_op("MutableHashTableV2", **kw)
        self._name = self._handle.op.name.split("/")[-1]
        if checkpoint:
            # NOTE: keyed by the `name` given (not the uniquified op name), as TF does
            get_default_graph().add_to_collection(GraphKeys.SAVEABLE_OBJECTS,
                                                  _TableSaveable(self, name))

    def insert(self, keys, values, name=None):
        keys = _check_keys(self, keys)
        values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
        with name_scope(name, f"{self._name}_lookup_table_insert", [self._handle]) as scope:
            return apply_op("LookupTableInsertV2", self._handle, keys, values, name=scope)

    def remove(self, keys, name=None):
        keys = _check_keys(self, keys)
        with name_scope(name, f"{self._name}_lookup_table_remove", [self._handle]) as scope:
            return apply_op("LookupTableRemoveV2", self._handle, keys, name=scope)

    def export(self, name=None):
        with name_scope(name, f"{self._name}_lookup_table_export_values",
                        [self._handle]) as scope:
            return apply_op("LookupTableExportV2", self._handle, Tkeys=self._key_dtype,
                            Tvalues=self._value_dtype, name=scope)

    def import_(self, keys, values, name=None):
        keys = _check_keys(self, keys)
        values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
        with name_scope(name, f"{self._name}_lookup_table_import", [self._handle]) as scope:
            return apply_op("LookupTableImportV2", self._handle, keys, values, name=scope)


class _TableSaveable(SaveableObject):
    """A mutable table in a checkpoint: its exported keys and values under `<name>-keys` and
    `<name>-values`, restored by LookupTableImportV2 (TF's MutableHashTable._Saveable)."""

    def __init__(self, table, name: str):
        keys, values = table.export()
        super().__init__(table, [SaveSpec(keys, "", name + "-keys"),
                                 SaveSpec(values, "", name + "-values")], name)

    def restore(self, restored_tensors, restored_shapes, name=None):
        del restored_shapes
        handle = self.op.resource_handle
        with name_scope(name, f"{self.name}_table_restore"), \
                handle.graph.colocate_with(handle.op):
            return apply_op("LookupTableImportV2", handle, restored_tensors[0],
                            restored_tensors[1])


class IdTableWithHashBuckets:
    """Ids from `table`, and for keys it lacks a hash bucket in `[size, size + buckets)`."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None,
                 key_dtype=None):
        if num_oov_buckets < 0:
            raise ValueError(f"oov_buckets must be >= 0, got {num_oov_buckets}.")
        self._table, self._buckets, self._hasher = table, num_oov_buckets, hasher_spec
        self._key_dtype = dtypes.as_dtype(key_dtype or table.key_dtype)
        self._name = name or (table.name if table is not None else "hash_bucket")

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: dtypes.int64)
    name = property(lambda self: self._name)

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table is not None else None

    def size(self, name=None):
        with name_scope(name, f"{self._name}_Size"):
            base = self._table.size() if self._table is not None else 0
            return add(base, self._buckets) if self._table is not None else convert_to_tensor(
                self._buckets, dtypes.int64)

    def _hash(self, keys):
        if keys.dtype != dtypes.string:
            keys = as_string(keys)
        if self._hasher.hasher == "stronghash":
            return apply_op("StringToHashBucketStrong", keys, num_buckets=self._buckets,
                            key=self._hasher.key)
        return string_to_hash_bucket_fast(keys, self._buckets)

    def lookup(self, keys, name=None):
        if isinstance(keys, SparseTensor):
            vals = keys.values
        else:
            vals = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        if vals.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype.name}, "
                            f"got {vals.dtype.base_dtype.name}.")
        with name_scope(name, f"{self._name}_Lookup"):
            ids = self._lookup_dense(vals)
        return SparseTensor(keys.indices, ids, keys.dense_shape) if isinstance(
            keys, SparseTensor) else ids

    def _lookup_dense(self, keys):
        table_keys = keys
        if self._table is not None and keys.dtype.is_integer and keys.dtype != dtypes.int64:
            table_keys = cast(keys, dtypes.int64)
        if self._buckets == 0:
            return self._table.lookup(table_keys)
        buckets = self._hash(keys)
        if self._table is None:
            return buckets
        ids = self._table.lookup(table_keys)
        hit = not_equal(ids, self._table.default_value)
        return where(hit, ids, add(buckets, self._table.size()))


class StaticVocabularyTable(IdTableWithHashBuckets):
    """`tf.lookup.StaticVocabularyTable`: vocabulary ids, then `num_oov_buckets` buckets."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets <= 0:
            raise ValueError("oov_buckets must be > 0; use StaticHashTable.")
        table = StaticHashTable(initializer, -1)
        super().__init__(table, num_oov_buckets, name=name, key_dtype=lookup_key_dtype)

    @property
    def initializer(self):
        return self._table.initializer


# -- helpers ---------------------------------------------------------------------------------
def _vocab_keys(vocabulary_list, dtype):
    keys = convert_to_tensor(vocabulary_list, name="vocabulary_list")
    if keys.dtype.is_integer != dtypes.as_dtype(dtype).is_integer:
        raise ValueError(f"Expected {dtypes.as_dtype(dtype).name}, got {keys.dtype.name}.")
    if keys.dtype.is_integer and keys.dtype != dtypes.int64:
        keys = cast(keys, dtypes.int64)
    return keys


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1,
                            hasher_spec=FastHashSpec, dtype=dtypes.string, name=None):
    """A table of vocabulary string (or int) -> its position, with optional OOV buckets."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    with name_scope(name, "string_to_index"):
        keys = _vocab_keys(vocabulary_list, dtype)
        values = cast(_range(_size(keys)), dtypes.int64)
        with name_scope(None, "hash_table"):
            init = KeyValueTensorInitializer(keys, values, keys.dtype, dtypes.int64,
                                             name="table_init")
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            return IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec, key_dtype=dtype)
        return table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None,
                          default_value=-1, hasher_spec=FastHashSpec, key_dtype=dtypes.string,
                          name=None, key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table of each line of `vocabulary_file` -> its line number, with OOV buckets."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got "
                         f"{num_oov_buckets}.")
    key_dtype = dtypes.as_dtype(key_dtype)
    table_dtype = dtypes.int64 if key_dtype.is_integer else key_dtype
    with name_scope(name, "string_to_index"):
        with name_scope(None, "hash_table"):
            init = TextFileIdTableInitializer(vocabulary_file, key_column_index,
                                              value_column_index, vocab_size, delimiter,
                                              key_dtype=table_dtype)
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            return IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec,
                                          key_dtype=key_dtype)
        return table


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table of position -> vocabulary string (`default_value` past the end)."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    with name_scope(name, "index_to_string"):
        values = convert_to_tensor(vocabulary_list, dtypes.string, name="vocabulary_list")
        keys = cast(_range(_size(values)), dtypes.int64)
        init = KeyValueTensorInitializer(keys, values, dtypes.int64, dtypes.string,
                                         name="table_init")
        return StaticHashTable(init, default_value)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK",
                                    name=None, key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE,
                                    delimiter="\t"):
    """A table of line number -> line of `vocabulary_file`."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    with name_scope(name, "index_to_string"):
        init = TextFileStringTableInitializer(vocabulary_file, key_column_index,
                                              value_column_index, vocab_size, delimiter)
        return StaticHashTable(init, default_value)


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    """Maps int64 ids to strings of `mapping` (contrib's one-shot helper)."""
    table = index_to_string_table_from_tensor(mapping, default_value, name)
    return table.lookup(tensor)


def tables_initializer(name="init_all_tables"):
    """One op running every table initializer of the graph (a NoOp when there are none)."""
    inits = get_collection(GraphKeys.TABLE_INITIALIZERS)
    return group(*inits, name=name) if inits else no_op(name=name)
