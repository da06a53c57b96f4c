"""TFRecord writing and streaming reading: framing, CRCs, compression, and the DataLossError
contract, against files written by TensorFlow (tests/data/digits*.tfrecord*)."""

import gzip
import os
import struct
import zlib
from pathlib import Path

import google_crc32c
import pytest

from tensorweave import errors
from tensorweave.formats import tfrecord
from tensorweave.formats.tfrecord import (
    RecordReader,
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    iter_records,
    masked_crc32c,
    tf_record_iterator,
)

DATA = Path(__file__).resolve().parent.parent / "data"
PLAIN = DATA / "digits.tfrecord"
GZ = DATA / "digits.tfrecord.gz"
CORRUPT = DATA / "digits_corrupt.tfrecord"


def _frame(data: bytes) -> bytes:
    """Independent framing: TF's layout, written out by hand."""
    def mask(c):
        return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    hdr = struct.pack("<Q", len(data))
    return (hdr + struct.pack("<I", mask(google_crc32c.value(hdr))) + data
            + struct.pack("<I", mask(google_crc32c.value(data))))


def _read_all(reader: RecordReader):
    """Reads to the end, collecting records and errors (skipping recoverable ones)."""
    recs, errs = [], []
    while True:
        try:
            rec = reader.read()
        except errors.DataLossError as e:
            errs.append(e)
            continue
        if rec is None:
            return recs, errs
        recs.append(rec)


# -- framing -----------------------------------------------------------------------------------
def test_crc32c_check_value_and_mask():
    assert google_crc32c.value(b"123456789") == 0xE3069283
    c = 0xE3069283
    assert masked_crc32c(b"123456789") == (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert masked_crc32c(b"") != google_crc32c.value(b"")


def test_writer_bytes_are_tf_framing(tmp_path):
    path = tmp_path / "a.tfrecord"
    items = [b"", b"x", b"hello world" * 100, "unicode é"]
    with TFRecordWriter(str(path)) as w:
        for it in items:
            w.write(it)
    want = b"".join(_frame(it.encode() if isinstance(it, str) else it) for it in items)
    assert path.read_bytes() == want


def test_round_trip_with_offsets_and_indices(tmp_path):
    path = tmp_path / "a.tfrecord"
    items = [os.urandom(n) for n in (0, 1, 5000, 17, 3 * 2**20)]
    with TFRecordWriter(path) as w:
        for it in items:
            w.write(it)
    recs = list(iter_records(path))
    assert [r.data for r in recs] == items
    assert [r.index for r in recs] == list(range(len(items)))
    offsets = [0]
    for it in items[:-1]:
        offsets.append(offsets[-1] + 16 + len(it))
    assert [r.offset for r in recs] == offsets


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB", TFRecordCompressionType.GZIP,
                                  TFRecordOptions(compression_type="ZLIB")])
def test_compressed_round_trip(tmp_path, kind):
    path = tmp_path / "c.tfrecord"
    items = [os.urandom(50) * i for i in range(40)]
    with TFRecordWriter(path, kind) as w:
        for it in items:
            w.write(it)
    name = tfrecord.compression_type_string(kind)
    raw = path.read_bytes()
    framed = b"".join(_frame(it) for it in items)
    assert (gzip.decompress(raw) if name == "GZIP" else zlib.decompress(raw)) == framed
    assert list(tf_record_iterator(str(path), TFRecordOptions(name))) == items


def test_writer_flush_makes_records_readable(tmp_path):
    path = tmp_path / "f.tfrecord.gz"
    w = TFRecordWriter(path, "GZIP")
    w.write(b"one")
    w.flush()
    d = zlib.decompressobj(31)
    assert d.decompress(path.read_bytes()) == _frame(b"one")
    w.close()
    w.close()  # idempotent
    with pytest.raises(errors.FailedPreconditionError):
        w.write(b"two")


def test_options_and_compression_names():
    assert TFRecordOptions.get_compression_type_string(None) == ""
    assert TFRecordOptions.get_compression_type_string("gzip") == "GZIP"
    assert TFRecordOptions.get_compression_type_string(TFRecordCompressionType.ZLIB) == "ZLIB"
    assert TFRecordOptions.get_compression_type_string(TFRecordOptions()) == ""
    with pytest.raises(ValueError, match="Unsupported compression type"):
        TFRecordOptions("LZ4")


def test_empty_file_has_no_records(tmp_path):
    path = tmp_path / "e.tfrecord"
    path.write_bytes(b"")
    assert list(tf_record_iterator(str(path))) == []
    assert list(tf_record_iterator(str(path), "GZIP")) == []
    with TFRecordWriter(tmp_path / "e.gz", "GZIP"):
        pass
    assert list(tf_record_iterator(str(tmp_path / "e.gz"), "GZIP")) == []


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(errors.NotFoundError, match="nope.tfrecord"):
        list(tf_record_iterator(str(tmp_path / "nope.tfrecord")))


def test_reader_streams_instead_of_loading_the_file(tmp_path):
    path = tmp_path / "big.tfrecord"
    with TFRecordWriter(path) as w:
        for _ in range(64):
            w.write(os.urandom(100_000))
    with RecordReader(path) as r:
        assert len(r.read().data) == 100_000
        assert r._f.tell() <= 2 * tfrecord._CHUNK < path.stat().st_size


# -- TensorFlow-written files ---------------------------------------------------------------
def test_tf_written_plain_file_reads_back():
    recs = list(iter_records(PLAIN))
    assert len(recs) == 200
    assert recs[-1].offset + 16 + len(recs[-1].data) == PLAIN.stat().st_size
    raw = PLAIN.read_bytes()
    assert b"".join(_frame(r.data) for r in recs) == raw


def test_tf_written_gzip_file_reads_identically():
    assert list(tf_record_iterator(str(GZ), "GZIP")) == list(tf_record_iterator(str(PLAIN)))


def test_corrupt_record_raises_data_loss_naming_file_offset_and_index():
    it = tf_record_iterator(str(CORRUPT))
    good = [next(it) for _ in range(10)]
    assert good == list(tf_record_iterator(str(PLAIN)))[:10]
    with pytest.raises(errors.DataLossError) as info:
        next(it)
    e = info.value
    header = sum(16 + len(r) for r in good)
    assert e.record_index == 10 and e.offset == header and e.filename == str(CORRUPT)
    assert e.recoverable
    msg = str(e)
    assert f"corrupted record at {header + 12}" in msg  # TF's number: the data's offset
    assert "digits_corrupt.tfrecord" in msg and "record index 10" in msg
    assert "data CRC mismatch" in msg


def test_corrupt_file_skip_policy_reads_on_and_reports_truncated_tail():
    recs, errs = _read_all(RecordReader(CORRUPT))
    plain = list(tf_record_iterator(str(PLAIN)))
    assert [r.data for r in recs] == plain[:10] + plain[11:199]
    assert [r.index for r in recs][9:11] == [9, 11]
    assert [e.record_index for e in errs] == [10, 199]
    tail = errs[1]
    assert not tail.recoverable and "truncated record" in str(tail)
    assert tail.offset == sum(16 + len(r) for r in plain[:199])
    assert "digits_corrupt.tfrecord" in str(tail)


def test_truncated_header_is_data_loss(tmp_path):
    path = tmp_path / "t.tfrecord"
    path.write_bytes(_frame(b"abc") + _frame(b"def")[:7])
    it = tf_record_iterator(str(path))
    assert next(it) == b"abc"
    with pytest.raises(errors.DataLossError, match=r"truncated record at 19 .*record index 1"):
        next(it)


def test_bad_length_crc_is_not_recoverable(tmp_path):
    path = tmp_path / "l.tfrecord"
    bad = bytearray(_frame(b"second"))
    bad[9] ^= 0xFF
    path.write_bytes(_frame(b"first") + bytes(bad) + _frame(b"third"))
    reader = RecordReader(path)
    assert reader.read().data == b"first"
    with pytest.raises(errors.DataLossError, match="length CRC mismatch") as info:
        reader.read()
    assert not info.value.recoverable and info.value.offset == 21
    assert reader.read() is None  # exhausted: a skipping caller moves on


def test_truncated_gzip_stream_is_data_loss(tmp_path):
    path = tmp_path / "cut.gz"
    raw = GZ.read_bytes()
    path.write_bytes(raw[:len(raw) // 2])
    reader = RecordReader(path, "GZIP")
    recs, errs = _read_all(reader)
    assert 0 < len(recs) < 200
    assert len(errs) == 1 and "truncated GZIP stream" in str(errs[0])
    assert errs[0].record_index == len(recs) and "cut.gz" in str(errs[0])


def test_gzip_missing_trailer_is_data_loss_even_at_a_record_boundary(tmp_path):
    path = tmp_path / "notrailer.gz"
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    path.write_bytes(z.compress(_frame(b"abc")) + z.flush(zlib.Z_SYNC_FLUSH))
    it = tf_record_iterator(str(path), "GZIP")
    assert next(it) == b"abc"
    with pytest.raises(errors.DataLossError, match="truncated GZIP stream"):
        next(it)


def test_corrupt_gzip_stream_is_data_loss(tmp_path):
    path = tmp_path / "bad.gz"
    raw = bytearray(GZ.read_bytes())
    raw[len(raw) // 2:len(raw) // 2 + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))
    with pytest.raises(errors.DataLossError, match="GZIP stream"):
        list(tf_record_iterator(str(path), "GZIP"))


def test_read_many_returns_records_before_an_error_then_raises(tmp_path):
    reader = RecordReader(CORRUPT)
    first = reader.read_many(64)
    assert len(first) == 10  # records 0..9, then the bad record 10 stops the batch
    with pytest.raises(errors.DataLossError, match="record index 10"):
        reader.read_many(64)
    rest = []
    while True:
        try:
            batch = reader.read_many(64)
        except errors.DataLossError as e:
            assert e.record_index == 199
            continue
        if not batch:
            break
        rest.extend(batch)
    plain = list(tf_record_iterator(str(PLAIN)))
    assert first + rest == plain[:10] + plain[11:199]


def test_read_many_matches_iteration_across_chunks(tmp_path):
    path = tmp_path / "m.tfrecord"
    items = [os.urandom(1000 + i) for i in range(3000)]
    with TFRecordWriter(path) as w:
        for it in items:
            w.write(it)
    reader = RecordReader(path)
    got = []
    while batch := reader.read_many(128):
        got.extend(batch)
    assert got == items and reader.index == len(items)
