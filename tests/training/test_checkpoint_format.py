"""The V2 checkpoint format: table blocks, bundle entries, string tensors, checksums, bad files,
atomic writes, merging, and the `checkpoint` state file. Golden files written by TensorFlow 2.21
live in tests/data/ckpt (model.ckpt-1234: the shared fixture; dtypes/: every dtype and a
multi-block index, from tests/training/make_tf_checkpoints.py)."""

from __future__ import annotations

import json
import os
import shutil
import struct

import google_crc32c
import numpy as np
import pytest

from tensorweave import dtypes, errors
from tensorweave.formats.checkpoint import bundle, crc, state, strings, table
from tensorweave.formats.checkpoint.bundle import (
    BundleReader,
    BundleWriter,
    data_filename,
    index_filename,
    merge_bundles,
    normalize_prefix,
)
from tensorweave.proto import tensor_bundle_pb2

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "ckpt")
FIXTURE = os.path.join(DATA, "model.ckpt-1234")
DTYPES = os.path.join(DATA, "dtypes", "dtypes")


def _manifest() -> dict:
    with open(os.path.join(DATA, "dtypes", "MANIFEST.json")) as f:
        return json.load(f)


def _copy_fixture(tmp_path, prefix=FIXTURE) -> str:
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(prefix + suffix, tmp_path / (os.path.basename(prefix) + suffix))
    return str(tmp_path / os.path.basename(prefix))


# -- checksums and varints -------------------------------------------------------------------
def test_mask_matches_tf_and_inverts():
    # NOTE: crc32c::Mask(0) is the mask delta; Mask(crc("123456789")) checked by hand
    assert crc.mask(0) == 0xA282EAD8
    c = google_crc32c.value(b"123456789")
    assert c == 0xE3069283
    assert crc.mask(c) == ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    for v in (0, 1, 0xFFFFFFFF, c, 0x12345678):
        assert crc.unmask(crc.mask(v)) == v


def test_extend_array_equals_crc_of_bytes_for_any_layout():
    a = np.random.default_rng(0).random((37, 11)).astype(np.float32)
    flat = a.reshape(-1).view(np.uint8)
    assert crc.extend_array(0, flat) == google_crc32c.value(a.tobytes())
    assert crc.extend_array(crc.value(b"ab"), flat) == google_crc32c.extend(
        google_crc32c.value(b"ab"), a.tobytes())
    with pytest.raises(ValueError, match="C-contiguous"):
        crc.extend_array(0, np.arange(10, dtype=np.uint8)[::2])


def test_checksum_pipe_matches_one_pass():
    chunks = np.random.default_rng(1).integers(0, 255, 3 * 1024 + 5, dtype=np.uint8)
    pipe = crc.ChecksumPipe()
    for start in range(0, chunks.size, 1000):
        pipe.add(chunks[start:start + 1000])
    assert pipe.value() == google_crc32c.value(chunks.tobytes())


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 2 ** 32, 2 ** 63 + 5])
def test_varint_round_trip(n):
    enc = table.encode_varint(n)
    assert table.decode_varint(enc + b"xyz", 0) == (n, len(enc))
    assert len(enc) == max(1, (n.bit_length() + 6) // 7)


def test_varint_truncated_raises():
    with pytest.raises(ValueError):
        table.decode_varint(b"\x80\x80", 0)


# -- the table -------------------------------------------------------------------------------
def _table_bytes(items, block_size=table.BLOCK_SIZE) -> bytes:
    import io

    f = io.BytesIO()
    b = table.TableBuilder(f, block_size=block_size)
    for k, v in items:
        b.add(k, v)
    b.finish()
    return f.getvalue()


def test_table_round_trips_across_many_blocks_and_restarts():
    items = [(f"key/{i:05d}/{'x' * (i % 7)}".encode(), os.urandom(i % 50)) for i in range(2000)]
    data = _table_bytes(items, block_size=1024)
    assert table.read_table(data, "t") == items
    (magic,) = struct.unpack("<Q", data[-8:])
    assert magic == table.MAGIC


def test_table_rejects_unsorted_keys():
    with pytest.raises(ValueError, match="increase"):
        _table_bytes([(b"b", b""), (b"a", b"")])


def test_table_separators_are_tf_shortest_separator():
    assert table._shortest_separator(b"abcd", b"abzz") == b"abd"
    assert table._shortest_separator(b"abc", b"abd") == b"abc"  # NOTE: c+1 == d, no room
    assert table._shortest_separator(b"ab", b"abc") == b"ab"
    assert table._short_successor(b"ab\xff") == b"b"
    assert table._short_successor(b"\xff\xff") == b"\xff\xff"


def test_compressed_block_is_rejected_clearly(tmp_path):
    data = bytearray(_table_bytes([(b"", b"h"), (b"a", b"1")]))
    # NOTE: rewrite the index block's trailer: type 1 (snappy) with a valid checksum
    index_off, size = _index_handle(bytes(data))
    block = bytes(data[index_off:index_off + size])
    data[index_off + size] = 1
    data[index_off + size + 1:index_off + size + 5] = struct.pack(
        "<I", crc.mask(crc.extend(crc.value(block), b"\x01")))
    with pytest.raises(errors.UnimplementedError, match="snappy"):
        table.read_table(bytes(data), "x.index")


def _index_handle(data: bytes) -> tuple[int, int]:
    footer = data[-table.FOOTER_SIZE:]
    _, pos = table.decode_varint(footer, 0)
    _, pos = table.decode_varint(footer, pos)
    off, pos = table.decode_varint(footer, pos)
    size, _ = table.decode_varint(footer, pos)
    return off, size


# -- TensorFlow's files: read, and write byte for byte ---------------------------------------
def test_reads_tf_fixture_values():
    expected = np.load(os.path.join(DATA, "expected_values.npz"), allow_pickle=True)
    with BundleReader(FIXTURE) as r:
        assert r.names() == ["counts", "dense/bias", "dense/kernel", "flags", "global_step",
                             "names", "scale"]
        assert r.header.num_shards == 1 and r.header.version.producer == 1
        for name in r.names():
            want = expected[name.replace("/", "__")]
            got = r.get_tensor(name)
            assert got.shape == want.shape and np.array_equal(got, want), name
        assert r.dtype("names") == dtypes.string and r.dtype("scale") == dtypes.float64
        assert r.shape("dense/kernel") == [64, 32]


def test_rewriting_tf_fixture_gives_identical_files(tmp_path):
    with BundleReader(FIXTURE) as r:
        order = sorted(r.names(), key=lambda n: r.entry(n).offset)  # TF's add order
        with BundleWriter(tmp_path / "re") as w:
            for name in order:
                w.add(name, r.get_tensor(name), r.dtype(name))
    for suffix in (".index", ".data-00000-of-00001"):
        assert (tmp_path / f"re{suffix}").read_bytes() == open(FIXTURE + suffix, "rb").read()


def test_reads_every_dtype_tf_writes():
    m = _manifest()
    expected = np.load(os.path.join(DATA, "dtypes", "expected.npz"))
    with BundleReader(DTYPES) as r:
        assert len(r.names()) == len(m["order"]) + m["many"]
        for name in m["order"]:
            assert r.dtype(name).name == m["dtypes"][name], name
            assert r.shape(name) == m["shapes"][name], name
            got = r.get_tensor(name)
            key = name.replace("/", "__")
            if name in m["strings_hex"]:
                assert [x.hex() for x in got.reshape(-1)] == m["strings_hex"][name]
            elif r.dtype(name) == dtypes.bfloat16:
                assert np.array_equal(got.view(np.uint16), expected[key + "__bits"])
            else:
                assert got.dtype == expected[key].dtype, name
                assert got.tobytes() == expected[key].tobytes(), name  # NaN-safe
        assert r.get_tensor("many/layer_11999/kernel").tolist() == [11999.0]


def test_writing_every_dtype_matches_tf_byte_for_byte(tmp_path):
    """Float16, bfloat16, complex, unsigned, bool, strings (long, empty, unicode), empty
    tensors and a two-block index: our writer reproduces TensorFlow's files exactly."""
    m = _manifest()
    order = m["order"] + [f"many/layer_{i:05d}/kernel" for i in range(m["many"])]
    with BundleReader(DTYPES) as r, BundleWriter(tmp_path / "d") as w:
        for name in order:
            w.add(name, r.get_tensor(name), r.dtype(name))
    index = (tmp_path / "d.index").read_bytes()
    assert index == open(DTYPES + ".index", "rb").read()
    assert (tmp_path / "d.data-00000-of-00001").read_bytes() == \
        open(DTYPES + ".data-00000-of-00001", "rb").read()
    assert len(index) > table.BLOCK_SIZE  # NOTE: several data blocks were needed


def test_header_entry_matches_tf():
    raw = open(FIXTURE + ".index", "rb").read()
    key, value = table.read_table(raw, "x")[0]
    header = tensor_bundle_pb2.BundleHeaderProto.FromString(value)
    assert key == b"" and header.num_shards == 1 and header.endianness == 0
    assert header.version.producer == 1


# -- string tensors --------------------------------------------------------------------------
def test_string_encoding_layout():
    data, checksum = strings.encode(np.array([b"ab", "é", b""], dtype=object))
    lengths = struct.pack("<3I", 2, 2, 0)
    stored = crc.mask(google_crc32c.value(lengths))
    assert data == b"\x02\x02\x00" + struct.pack("<I", stored) + b"ab\xc3\xa9"
    assert checksum == google_crc32c.value(lengths + struct.pack("<I", stored) + b"ab\xc3\xa9")
    values, again = strings.decode(data, 3)
    assert values.tolist() == [b"ab", "é".encode(), b""] and again == checksum


def test_string_length_checksum_mismatch_is_data_loss(tmp_path):
    with BundleWriter(tmp_path / "s") as w:
        w.add("s", np.array([b"hello", b"world"], dtype=object))
    data = tmp_path / "s.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[3] ^= 0xFF  # NOTE: the length checksum sits after the two 1-byte varints
    data.write_bytes(bytes(raw))
    with BundleReader(tmp_path / "s") as r, pytest.raises(errors.DataLossError) as e:
        r.get_tensor("s")
    assert "s.data-00000-of-00001" in str(e.value) and "lengths" in str(e.value)


# -- writer behaviour ------------------------------------------------------------------------
def test_writer_round_trips_values_and_records_offsets(tmp_path):
    vals = {"a": np.arange(12, dtype=np.int64).reshape(3, 4), "b": np.float16([1.5, -2.0]),
            "c": np.array(b"x", dtype=object), "d": np.zeros((0, 3), np.float32)}
    with BundleWriter(tmp_path / "w") as w:
        for k, v in vals.items():
            w.add(k, v)
    with BundleReader(tmp_path / "w") as r:
        assert [r.entry(k).offset for k in "abcd"] == [0, 96, 100, 100 + r.entry("c").size]
        for k, v in vals.items():
            got = r.get_tensor(k)
            assert got.dtype == v.dtype and got.shape == v.shape and got.tolist() == v.tolist()
        assert r.entry("d").size == 0 and r.entry("d").crc32c == crc.mask(0)


def test_writer_rejects_duplicates_and_wrong_dtypes(tmp_path):
    with BundleWriter(tmp_path / "w") as w:
        w.add("a", np.zeros(2, np.float32))
        with pytest.raises(errors.InvalidArgumentError, match="duplicate"):
            w.add("a", np.zeros(2, np.float32))
        with pytest.raises(errors.InvalidArgumentError, match="declared float32"):
            w.add("b", np.zeros(2, np.float64), dtypes.float32)


def test_big_endian_input_is_stored_little_endian(tmp_path):
    with BundleWriter(tmp_path / "e") as w:
        w.add("x", np.array([1.0, 2.0], dtype=">f4"), dtypes.float32)
    with BundleReader(tmp_path / "e") as r:
        assert r.get_tensor("x").tolist() == [1.0, 2.0]
    assert (tmp_path / "e.data-00000-of-00001").read_bytes() == np.float32([1, 2]).tobytes()


def test_failed_write_leaves_previous_checkpoint_and_no_temp_files(tmp_path):
    prefix = tmp_path / "m"
    with BundleWriter(prefix) as w:
        w.add("v", np.ones(3, np.float32))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(RuntimeError), BundleWriter(prefix) as w:
        w.add("v", np.zeros(3, np.float32))
        raise RuntimeError("crash in the middle of a save")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    with BundleReader(prefix) as r:
        assert r.get_tensor("v").tolist() == [1, 1, 1]


def test_writer_creates_its_directory_one_level_as_tf(tmp_path):
    """TF's SaveV2 creates the prefix's directory but not its parents (NotFound), and a file
    in the directory's place fails the data file's open (ENOTDIR: FailedPrecondition)."""
    with BundleWriter(tmp_path / "a" / "m") as w:
        w.add("x", np.int32(3))
    assert (tmp_path / "a" / "m.index").exists()
    with pytest.raises(errors.NotFoundError, match="No such file"):
        BundleWriter(tmp_path / "b" / "c" / "m")
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(errors.FailedPreconditionError, match="Not a directory"):
        BundleWriter(tmp_path / "f" / "m")


def test_large_tensor_chunked_write_and_mapped_read(tmp_path):
    big = np.random.default_rng(2).random(3 * (1 << 20) + 7).astype(np.float32)  # ~12 MiB
    with BundleWriter(tmp_path / "big") as w:
        w.add("flag", np.array([True, False, True]))  # NOTE: the next offset is unaligned
        w.add("big", big)
    with BundleReader(tmp_path / "big") as r:
        assert r.entry("big").offset == 3
        assert np.array_equal(r.get_tensor("big"), big)
        mapped = r.get_tensor("big", mapped=True)
        assert np.array_equal(mapped, big) and mapped.flags.writeable
        mapped[0] = -1.0  # NOTE: copy-on-write: the file keeps its bytes
        assert r.get_tensor("big")[0] == big[0]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_mapped_reads_share_one_map_per_file(tmp_path, monkeypatch):
    monkeypatch.setattr(bundle, "_MAP_MIN", 1)
    with BundleWriter(tmp_path / "many") as w:
        for i in range(200):
            w.add(f"t{i:03d}", np.full(5, i, np.float32))
    before = len(os.listdir("/proc/self/fd"))
    with BundleReader(tmp_path / "many") as r:
        arrays = [r.get_tensor(f"t{i:03d}", mapped=True) for i in range(200)]
    assert len(os.listdir("/proc/self/fd")) - before <= 1  # NOTE: not one per tensor
    assert [int(a[0]) for a in arrays] == list(range(200))
    assert all(a.tolist() == [i] * 5 for i, a in enumerate(arrays))


def test_get_tensors_checks_every_mapped_checksum(tmp_path, monkeypatch):
    monkeypatch.setattr(bundle, "_MAP_MIN", 8)
    vals = {f"t{i}": np.full(100, i, np.float64) for i in range(4)}
    vals["s"] = np.array([b"str"], dtype=object)
    with BundleWriter(tmp_path / "g") as w:
        for k, v in vals.items():
            w.add(k, v)
    with BundleReader(tmp_path / "g") as r:
        got = r.get_tensors(list(vals), mapped=True)
    assert [g.tolist() for g in got] == [v.tolist() for v in vals.values()]
    data = tmp_path / "g.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[2 * 800 + 5] ^= 1  # NOTE: inside t2
    data.write_bytes(bytes(raw))
    with BundleReader(tmp_path / "g") as r, \
            pytest.raises(errors.DataLossError, match="tensor t2"):
        r.get_tensors(list(vals), mapped=True)


# -- bad files -------------------------------------------------------------------------------
@pytest.mark.parametrize("cut", [0, 10, 47, 200])
def test_truncated_index_is_data_loss_naming_the_file(tmp_path, cut):
    prefix = _copy_fixture(tmp_path)
    raw = open(prefix + ".index", "rb").read()
    open(prefix + ".index", "wb").write(raw[:cut])
    with pytest.raises(errors.DataLossError) as e:
        BundleReader(prefix)
    assert "model.ckpt-1234.index" in str(e.value)


def test_flipped_index_byte_is_data_loss(tmp_path):
    prefix = _copy_fixture(tmp_path)
    raw = bytearray(open(prefix + ".index", "rb").read())
    raw[40] ^= 0x01
    open(prefix + ".index", "wb").write(bytes(raw))
    with pytest.raises(errors.DataLossError, match="checksum mismatch.*corrupt|corrupt"):
        BundleReader(prefix)


def test_not_an_index_file_is_data_loss(tmp_path):
    (tmp_path / "x.index").write_bytes(b"hello" * 20)
    with pytest.raises(errors.DataLossError, match="bad magic"):
        BundleReader(tmp_path / "x")


@pytest.mark.parametrize("mapped", [False, True])
def test_truncated_data_is_data_loss_naming_the_file(tmp_path, monkeypatch, mapped):
    monkeypatch.setattr(bundle, "_MAP_MIN", 1)  # NOTE: map even small tensors
    prefix = _copy_fixture(tmp_path)
    data = prefix + ".data-00000-of-00001"
    raw = open(data, "rb").read()
    open(data, "wb").write(raw[:1000])
    with BundleReader(prefix) as r:
        assert r.get_tensor("counts").shape == (3, 4)  # NOTE: offsets 0..47 are still there
        with pytest.raises(errors.DataLossError) as e:
            r.get_tensor("dense/kernel", mapped=mapped)
    assert "model.ckpt-1234.data-00000-of-00001" in str(e.value)
    assert "truncated" in str(e.value)


def test_corrupt_data_fails_its_checksum(tmp_path):
    prefix = _copy_fixture(tmp_path)
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[500] ^= 0x10  # inside dense/kernel (offset 176, 8192 bytes)
    open(data, "wb").write(bytes(raw))
    with BundleReader(prefix) as r:
        assert r.get_tensor("dense/bias").shape == (32,)
        with pytest.raises(errors.DataLossError, match="Checksum does not match.*dense/kernel"):
            r.get_tensor("dense/kernel")


def test_missing_files_are_not_found(tmp_path):
    with pytest.raises(errors.NotFoundError, match="Failed to find any matching files"):
        BundleReader(tmp_path / "nothing")
    prefix = _copy_fixture(tmp_path)
    os.remove(prefix + ".data-00000-of-00001")
    with BundleReader(prefix) as r, pytest.raises(errors.NotFoundError, match="data-00000"):
        r.get_tensor("counts")
    with pytest.raises(errors.NotFoundError, match="Key nope not found"):
        BundleReader(prefix).entry("nope")


def test_prefix_may_be_given_as_any_of_its_files():
    for path in (FIXTURE + ".index", FIXTURE + ".data-00000-of-00001", FIXTURE + ".meta"):
        assert normalize_prefix(path) == FIXTURE
        with BundleReader(path) as r:
            assert r.prefix == FIXTURE
    assert normalize_prefix("a/model.ckpt-5") == "a/model.ckpt-5"


# -- merging sharded bundles -----------------------------------------------------------------
def test_merge_bundles_renumbers_shards_and_removes_parts(tmp_path):
    parts = [str(tmp_path / "m_temp" / f"part-{i:05d}-of-00002") for i in range(2)]
    with BundleWriter(parts[0]) as w:
        w.add("b", np.arange(3, dtype=np.int32))
    with BundleWriter(parts[1]) as w:
        w.add("a", np.float64([1.5]))
        w.add("c", np.array([b"z"], dtype=object))
    merge_bundles(parts, str(tmp_path / "m"))
    assert sorted(os.listdir(tmp_path)) == ["m.data-00000-of-00002", "m.data-00001-of-00002",
                                           "m.index"]
    with BundleReader(tmp_path / "m") as r:
        assert r.num_shards == 2
        assert [r.entry(n).shard_id for n in "abc"] == [1, 0, 1]
        assert r.get_tensor("a").tolist() == [1.5] and r.get_tensor("b").tolist() == [0, 1, 2]
        assert r.get_tensor("c").tolist() == [b"z"]


def test_merge_rejects_duplicates_and_missing(tmp_path):
    for name in ("p", "q"):
        with BundleWriter(tmp_path / name) as w:
            w.add("same", np.int32(1))
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate tensor key same"):
        merge_bundles([str(tmp_path / "p"), str(tmp_path / "q")], str(tmp_path / "out"))
    with pytest.raises(errors.NotFoundError):
        merge_bundles([str(tmp_path / "gone")], str(tmp_path / "out"))
    merge_bundles([str(tmp_path / "gone"), str(tmp_path / "p")], str(tmp_path / "out"),
                  allow_missing_files=True)
    assert BundleReader(tmp_path / "out").names() == ["same"]


# -- the state file --------------------------------------------------------------------------
def test_state_file_text_format_and_relative_paths(tmp_path):
    d = str(tmp_path)
    state.update_checkpoint_state(d, os.path.join(d, "model-2"),
                                  [os.path.join(d, "model-1"), os.path.join(d, "model-2")],
                                  save_relative_paths=True)
    text = (tmp_path / "checkpoint").read_text()
    assert text == ('model_checkpoint_path: "model-2"\n'
                    'all_model_checkpoint_paths: "model-1"\n'
                    'all_model_checkpoint_paths: "model-2"\n')
    ckpt = state.get_checkpoint_state(d)
    assert ckpt.model_checkpoint_path == os.path.join(d, "model-2")
    assert list(ckpt.all_model_checkpoint_paths) == [os.path.join(d, "model-1"),
                                                     os.path.join(d, "model-2")]
    assert not [p for p in os.listdir(d) if p.endswith(".tmp")]


def test_state_file_keeps_absolute_paths_unless_asked(tmp_path):
    d = str(tmp_path)
    state.update_checkpoint_state(d, os.path.join(d, "m-1"))
    assert f'model_checkpoint_path: "{os.path.join(d, "m-1")}"' in \
        (tmp_path / "checkpoint").read_text()


def test_state_file_model_path_is_appended_last(tmp_path):
    ckpt = state.generate_checkpoint_state_proto("/abs", "/abs/m-3", ["/abs/m-1"])
    assert list(ckpt.all_model_checkpoint_paths) == ["/abs/m-1", "/abs/m-3"]
    rel = state.generate_checkpoint_state_proto("d", "d/m-3", ["d/m-1"])
    assert rel.model_checkpoint_path == "m-3"
    assert list(rel.all_model_checkpoint_paths) == ["m-1", "m-3"]
    with pytest.raises(ValueError, match="timestamps"):
        state.generate_checkpoint_state_proto("/abs", "/abs/m", ["/abs/m"], [1.0, 2.0])


def test_latest_checkpoint_reads_tf_state_file(tmp_path):
    for f in os.listdir(DATA):
        if f.startswith("model.ckpt") or f == "checkpoint":
            shutil.copy(os.path.join(DATA, f), tmp_path / f)
    assert state.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-1234")
    os.remove(tmp_path / "model.ckpt-1234.index")
    assert state.latest_checkpoint(str(tmp_path)) is None  # NOTE: named but not on disk
    assert state.latest_checkpoint(str(tmp_path / "empty")) is None


def test_unparsable_state_file_is_ignored(tmp_path):
    (tmp_path / "checkpoint").write_text("this is { not a proto")
    assert state.get_checkpoint_state(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('all_model_checkpoint_paths: "x"\n')
    with pytest.raises(ValueError, match="Invalid checkpoint state"):
        state.get_checkpoint_state(str(tmp_path))


def test_checkpoint_exists_mtimes_and_remove(tmp_path):
    prefix = _copy_fixture(tmp_path)
    open(prefix + ".meta", "wb").write(b"meta")
    assert state.checkpoint_exists(prefix) and state.checkpoint_exists(prefix + ".index")
    assert not state.checkpoint_exists(prefix + "-nope")
    assert len(state.get_checkpoint_mtimes([prefix, prefix + "-nope"])) == 1
    state.remove_checkpoint(prefix)
    assert os.listdir(tmp_path) == []


def test_meta_graph_filename():
    assert state.meta_graph_filename("a/m-10") == "a/m-10.meta"
    assert state.meta_graph_filename("a/m-?????-of-00002", "mg") == "a/m.mg"


def test_data_and_index_file_names():
    assert data_filename("p", 1, 12) == "p.data-00001-of-00012"
    assert index_filename("p") == "p.index"
