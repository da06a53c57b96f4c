"""`tf.contrib.lookup`: TF1's table classes and index-table helpers."""

from tensorweave.ops.lookup_tables import (
    FastHashSpec,
    HasherSpec,
    HashTable,
    IdTableWithHashBuckets,
    KeyValueTensorInitializer,
    MutableDenseHashTable,
    MutableHashTable,
    StrongHashSpec,
    TableInitializerBase,
    TextFileIdTableInitializer,
    TextFileIndex,
    TextFileInitializer,
    TextFileStringTableInitializer,
    index_table_from_file,
    index_table_from_tensor,
    index_to_string,
    index_to_string_table_from_file,
    index_to_string_table_from_tensor,
    tables_initializer,
)

__all__ = [
    "FastHashSpec", "HashTable", "HasherSpec", "IdTableWithHashBuckets",
    "KeyValueTensorInitializer", "MutableDenseHashTable", "MutableHashTable", "StrongHashSpec",
    "TableInitializerBase",
    "TextFileIdTableInitializer", "TextFileIndex", "TextFileInitializer",
    "TextFileStringTableInitializer", "index_table_from_file", "index_table_from_tensor",
    "index_to_string", "index_to_string_table_from_file", "index_to_string_table_from_tensor",
    "tables_initializer",
]
