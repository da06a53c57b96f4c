"""`tf.lookup` (TF1's `tf.compat.v1.lookup`)."""

from tensorweave.ops.lookup_tables import (
    DenseHashTable,
    KeyValueTensorInitializer,
    MutableHashTable,
    StaticHashTable,
    StaticVocabularyTable,
    TextFileIndex,
    TextFileInitializer,
)


class experimental:  # noqa: N801 - TF's module name
    """`tf.lookup.experimental`."""

    MutableHashTable = MutableHashTable
    DenseHashTable = DenseHashTable


__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable",
           "TextFileIndex", "TextFileInitializer", "experimental"]
