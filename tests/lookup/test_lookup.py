"""Lookup tables: every table op (HashTableV2, MutableHashTable(OfTensors)V2, Find, Insert,
Import, Remove, Size, Export, InitializeTable(FromTextFile)V2) through the tf.lookup and
tf.contrib.lookup classes, with TF's behaviours and errors."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import lookup_ops

lookup = tf.contrib.lookup


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _ops(g) -> set:
    return {op.type for op in g.get_operations()}


def test_static_table_default_and_initializers_collection(graph):
    init = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([7, 9], tf.int64))
    table = tf.lookup.StaticHashTable(init, -1)
    assert graph.get_collection(tf.GraphKeys.TABLE_INITIALIZERS) == [table.initializer]
    found = table.lookup(tf.constant([["b", "x"], ["a", "a"]]))
    assert found.shape.as_list() == [2, 2]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
            sess.run(found)
        sess.run(tf.tables_initializer())
        sess.run(tf.tables_initializer())        # same data again: fine, as TF
        np.testing.assert_array_equal(sess.run(found), [[9, -1], [7, 7]])
        assert sess.run(table.size()) == 2
        keys, values = sess.run(table.export())
    assert dict(zip(keys.tolist(), values.tolist())) == {b"a": 7, b"b": 9}
    assert {"HashTableV2", "InitializeTableV2", "LookupTableFindV2", "LookupTableSizeV2",
            "LookupTableExportV2"} <= _ops(graph)


def test_reinitialising_with_other_data_fails(graph):
    keys = tf.placeholder(tf.int64, [None])
    table = lookup.HashTable(lookup.KeyValueTensorInitializer(keys, tf.ones_like(keys)), 0)
    with tf.Session() as sess:
        sess.run(table.initializer, {keys: [1, 2]})
        with pytest.raises(tf.errors.FailedPreconditionError, match="different data"):
            sess.run(table.initializer, {keys: [1, 3]})


def test_duplicate_key_with_other_value_fails(graph):
    table = lookup.HashTable(lookup.KeyValueTensorInitializer(
        tf.constant([1, 1], tf.int64), tf.constant([2, 3], tf.int64)), 0)
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError,
                                             match="different value for same key"):
        sess.run(table.initializer)


def test_key_dtype_mismatch_is_a_type_error(graph):
    table = lookup.HashTable(lookup.KeyValueTensorInitializer(["a"], [1.0]), 0.0)
    with pytest.raises(TypeError, match="Keys must be dtype string"):
        table.lookup(tf.constant([1], tf.int64))


def test_sparse_keys_keep_indices(graph):
    table = lookup.index_table_from_tensor(["x", "y"])
    sp = tf.SparseTensor([[0, 1], [2, 0]], ["y", "nope"], [3, 2])
    ids = table.lookup(sp)
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        v = sess.run(ids)
    np.testing.assert_array_equal(v.indices, [[0, 1], [2, 0]])
    np.testing.assert_array_equal(v.values, [1, -1])


def test_mutable_table_insert_remove_import_export(graph):
    t = lookup.MutableHashTable(tf.string, tf.int64, default_value=-1)
    ins = t.insert(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64))
    rm = t.remove(tf.constant(["b"]))
    imp = t.import_(tf.constant(["z"]), tf.constant([26], tf.int64))
    found = t.lookup(tf.constant(["a", "b", "z"]))
    with tf.Session() as sess:
        sess.run(ins)
        sess.run(t.insert(tf.constant(["a"]), tf.constant([10], tf.int64)))  # overwrites
        sess.run(rm)
        np.testing.assert_array_equal(sess.run(found), [10, -1, -1])
        assert sess.run(t.size()) == 2
        sess.run(imp)                                                 # replaces everything
        np.testing.assert_array_equal(sess.run(found), [-1, -1, 26])
        keys, vals = sess.run(t.export())
    assert keys.tolist() == [b"z"] and vals.tolist() == [26]
    assert {"MutableHashTableV2", "LookupTableInsertV2", "LookupTableRemoveV2",
            "LookupTableImportV2"} <= _ops(graph)


def test_mutable_table_of_vectors(graph):
    t = lookup.MutableHashTable(tf.int64, tf.float32, default_value=[0.0, -1.0])
    ins = t.insert(tf.constant([5, 6], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    found = t.lookup(tf.constant([[6, 7]], tf.int64))
    assert found.shape.as_list() == [1, 2, 2]
    assert t.resource_handle.op.type == "MutableHashTableOfTensorsV2"
    with tf.Session() as sess:
        sess.run(ins)
        np.testing.assert_array_equal(sess.run(found), [[[3.0, 4.0], [0.0, -1.0]]])


def test_static_table_refuses_insert(graph):
    table = lookup.HashTable(lookup.KeyValueTensorInitializer(["a"], [1.0]), 0.0)
    ins = lookup_ops  # noqa: F841 - the op module registers LookupTableInsertV2
    from tensorweave.ops.apply import apply_op
    op = apply_op("LookupTableInsertV2", table.resource_handle, tf.constant(["b"]),
                  tf.constant([2.0]))
    with tf.Session() as sess:
        sess.run(table.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not supported"):
            sess.run(op)


@pytest.fixture
def vocab(tmp_path):
    p = tmp_path / "vocab.txt"
    p.write_text("emerson\nlake\npalmer\n")
    return str(p)


def test_index_tables_from_file(graph, vocab):
    ids = lookup.index_table_from_file(vocab, num_oov_buckets=2)
    words = lookup.index_to_string_table_from_file(vocab)
    small = lookup.index_table_from_file(vocab, vocab_size=2, default_value=-5)
    a = ids.lookup(tf.constant(["lake", "palmer", "zappa"]))
    b = words.lookup(tf.constant([2, 0, 9], tf.int64))
    c = small.lookup(tf.constant(["palmer", "emerson"]))
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got_a, got_b, got_c = sess.run([a, b, c])
    assert got_a[:2].tolist() == [1, 2] and got_a[2] in (3, 4)
    assert got_b.tolist() == [b"palmer", b"emerson", b"UNK"]
    assert got_c.tolist() == [-5, 0]
    assert "InitializeTableFromTextFileV2" in _ops(graph)


def test_text_file_columns_and_errors(graph, tmp_path):
    p = tmp_path / "kv.tsv"
    p.write_text("a\t1.5\nb\t2.5\n")
    init = lookup.TextFileInitializer(str(p), tf.string, 0, tf.float32, 1)
    table = lookup.HashTable(init, -1.0)
    too_many = lookup.HashTable(lookup.TextFileInitializer(
        str(p), tf.string, 0, tf.int64, lookup.TextFileIndex.LINE_NUMBER, vocab_size=5), -1)
    with tf.Session() as sess:
        sess.run(table.initializer)
        np.testing.assert_allclose(sess.run(table.lookup(tf.constant(["b", "q"]))), [2.5, -1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid vocab_size"):
            sess.run(too_many.initializer)
    with pytest.raises(ValueError, match="Signature mismatch"):
        lookup.TextFileInitializer(str(p), tf.string, -1, tf.int64, 1)


def test_shared_name_shares_one_table(graph):
    a = lookup.MutableHashTable(tf.int64, tf.int64, -1, shared_name="shared")
    b = lookup.MutableHashTable(tf.int64, tf.int64, -1, shared_name="shared")
    ins = a.insert(tf.constant([1], tf.int64), tf.constant([11], tf.int64))
    with tf.Session() as sess:
        sess.run(ins)
        assert sess.run(b.lookup(tf.constant([1], tf.int64))).tolist() == [11]


def test_dense_hash_table_op():
    """MutableDenseHashTableV2 (more in test_table_checkpoint.py): lookups, removes, size."""
    with tf.Graph().as_default():
        t = tf.lookup.experimental.DenseHashTable(tf.string, tf.int64, -1, empty_key="",
                                                  deleted_key="-", initial_num_buckets=8)
        assert t.resource_handle.op.type == "MutableDenseHashTableV2"
        ins = t.insert(tf.constant(["x", "y"]), tf.constant([1, 2], tf.int64))
        with tf.Session() as sess:
            sess.run(ins)
            sess.run(t.remove(tf.constant(["x"])))
            assert sess.run(t.lookup(tf.constant(["x", "y"]))).tolist() == [-1, 2]
            assert sess.run(t.size()) == 1


def test_every_table_op_is_used_here():
    import inspect
    src = inspect.getsource(inspect.getmodule(test_every_table_op_is_used_here))
    missing = [op for op in lookup_ops.OP_TYPES if op not in src]
    assert not missing, missing
