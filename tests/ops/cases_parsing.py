"""Parsing ops in the harness: Example parsing, DecodeRaw/CSV/Base64, StringToNumber and
SparseToDense, with references computed without our kernels (protobuf objects, struct, csv).
Error behaviour and the file ops: tests/dataio/test_parsing.py."""

import base64
import csv

import numpy as np

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.parsing  # noqa: F401  (until kernels.cpu imports it)
import tensorweave.runtime.kernels.cpu.parsing_io  # noqa: F401
from tensorweave.formats import example as ex
from tensorweave.ops import parsing_ops
from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase


def _strings(items, shape=None) -> np.ndarray:
    out = np.empty(len(items), object)
    out[:] = items
    return out.reshape(shape if shape is not None else [len(items)])


def _example(**features) -> bytes:
    return ex.Example(features=ex.Features(
        feature={k: ex.feature_of(v) for k, v in features.items()})).SerializeToString()


_RECORDS = _strings([
    _example(x=np.arange(6, dtype=np.float32) + i, y=np.int64(i * 100 - 7),
             s=[b"a%d" % i, b"bb"], v=np.arange(i, dtype=np.float32) * 0.5)
    for i in range(3)])
_FEATURES = {"x": ex.FixedLenFeature([2, 3], tf.float32), "y": ex.FixedLenFeature([], tf.int64),
             "s": ex.FixedLenFeature([2], tf.string)}


def _upb(serialized, key, kind):
    out = []
    for r in np.asarray(serialized, object).reshape(-1):
        f = ex.Example.FromString(r).features.feature[key]
        out.append(list(getattr(f, kind).value))
    return out


def _ref_dense(serialized):
    n = np.asarray(serialized).size
    return [np.array(_upb(serialized, "s", "bytes_list"), object).reshape(n, 2),
            np.array(_upb(serialized, "x", "float_list"), np.float32).reshape(n, 2, 3),
            np.array(_upb(serialized, "y", "int64_list"), np.int64).reshape(n)]


def _ref_sparse(serialized):
    rows = _upb(serialized, "v", "float_list")
    idx = [[b, k] for b, r in enumerate(rows) for k in range(len(r))]
    return [np.array(idx, np.int64).reshape(-1, 2),
            np.array([v for r in rows for v in r], np.float32),
            np.array([len(rows), max(map(len, rows))], np.int64)]


def _parse_dense(s):
    f = parsing_ops.parse_example(s, _FEATURES)
    return [f["s"], f["x"], f["y"]]


def _parse_sparse(s):
    st = parsing_ops.parse_example(s, {"v": ex.VarLenFeature(tf.float32)})["v"]
    return [st.indices, st.values, st.dense_shape]


def _parse_single(s):
    f = parsing_ops.parse_single_example(s, {"x": ex.FixedLenFeature([2, 3], tf.float32),
                                             "y": ex.FixedLenFeature([], tf.int64)})
    return [f["x"], f["y"]]


def _ref_single(s):
    x, y = _ref_dense(s)[1:]
    return [x[0], y[0]]


def _parse_example_v1(s):
    outs = apply_op("ParseExample", s, [], [], [b"x", b"y"],
                    [np.zeros(0, np.float32), np.array(5, np.int64)], sparse_types=[],
                    dense_shapes=[[2, 3], []])
    return outs[3]


def _parse_single_op(s):
    outs = apply_op("ParseSingleExample", s, [np.zeros(0, np.float32)], num_sparse=1,
                    sparse_keys=["v"], dense_keys=["x"], sparse_types=[tf.float32],
                    dense_shapes=[[2, 3]])
    return [outs[0][0], outs[1][0], outs[2][0], outs[3][0]]


def _ref_single_op(s):
    x = _ref_dense(s)[1][0]
    v = np.array(_upb(s, "v", "float_list")[0], np.float32)
    return [np.arange(v.size, dtype=np.int64).reshape(-1, 1), v,
            np.array([v.size], np.int64), x]


# -- DecodeRaw ---------------------------------------------------------------------------------
def _raw_case(np_dtype, tf_dtype, little=True):
    rng = np.random.default_rng(1)
    vals = (rng.random((2, 3, 4)) * 100).astype(np_dtype)
    order = "<" if little else ">"
    data = _strings([v.astype(np.dtype(np_dtype).newbyteorder(order)).tobytes()
                     for v in vals.reshape(6, 4)], [2, 3])
    return OpCase("DecodeRaw", lambda b: parsing_ops.decode_raw(b, tf_dtype, little_endian=little),
                  [data], lambda b: vals, name=f"{tf_dtype.name}-{'le' if little else 'be'}",
                  exact_static_shape=False)


# -- DecodeCSV ---------------------------------------------------------------------------------
_CSV = _strings([b'1.5,"x,y",7,12', b'-2,plain,,3', b' 4 ,"q""uote",9,-1'])


def _ref_csv(records):
    rows = list(csv.reader([r.decode() for r in records]))
    return [np.array([float(r[0]) for r in rows], np.float32),
            np.array([r[1].encode() for r in rows], object),
            np.array([int(r[2]) if r[2] else 42 for r in rows], np.int32),
            np.array([int(r[3]) for r in rows], np.int64)]


def _decode_csv(records):
    return parsing_ops.decode_csv(records, [[0.0], [""], [42], tf.constant([], tf.int64)])


# -- SparseToDense -----------------------------------------------------------------------------
def _s2d_ref(idx, shape, vals, default):
    out = np.full(shape, default, dtype=np.asarray(vals).dtype)
    for i, v in zip(np.asarray(idx).reshape(len(vals), -1), vals):
        out[tuple(i)] = v
    return out


CASES = [
    OpCase("ParseExampleV2", _parse_dense, [_RECORDS], _ref_dense, name="dense"),
    OpCase("ParseExampleV2", _parse_sparse, [_RECORDS], _ref_sparse, name="varlen",
           exact_static_shape=False),
    OpCase("ParseExampleV2", _parse_single, [_RECORDS[1:2].reshape(())], _ref_single,
           name="single"),
    OpCase("ParseExample", _parse_example_v1, [_RECORDS],
           lambda s: _ref_dense(s)[1:]),
    OpCase("ParseSingleExample", _parse_single_op, [_RECORDS[2:].reshape(())], _ref_single_op,
           exact_static_shape=False),
    _raw_case(np.float32, tf.float32),
    _raw_case(np.int16, tf.int16, little=False),
    _raw_case(np.float64, tf.float64),
    _raw_case(np.uint8, tf.uint8),
    _raw_case(np.int64, tf.int64, little=False),
    OpCase("DecodeCSV", _decode_csv, [_CSV], _ref_csv),
    OpCase("DecodeCSV", lambda r: parsing_ops.decode_csv(r, [[""], [1.0]], field_delim="|",
                                                          select_cols=[1, 3]),
           [_strings([b"a|1|b|2.5", b"c|3|d|-1"], [2, 1])],
           lambda r: [np.array([[b"1"], [b"3"]], object), np.array([[2.5], [-1]], np.float32)],
           name="select"),
    OpCase("StringToNumber", lambda s: parsing_ops.string_to_number(s),
           [_strings([b"1.5", b" -2e3", b"inf", b"7"], [2, 2])],
           lambda s: np.array([[1.5, -2e3], [np.inf, 7]], np.float32), name="float32"),
    OpCase("StringToNumber", lambda s: parsing_ops.string_to_number(s, tf.int64),
           [_strings([b"12", b"-9000000000", b"0"])],
           lambda s: np.array([12, -9000000000, 0], np.int64), name="int64"),
    OpCase("StringToNumber", lambda s: parsing_ops.string_to_number(s, tf.int32),
           [_strings([b"3", b"-4"])], lambda s: np.array([3, -4], np.int32), name="int32"),
    OpCase("EncodeBase64", lambda s: parsing_ops.encode_base64(s),
           [_strings([b"hello?>", b"a", b""])],
           lambda s: np.array([base64.urlsafe_b64encode(v).rstrip(b"=") for v in s], object)),
    OpCase("EncodeBase64", lambda s: parsing_ops.encode_base64(s, pad=True),
           [_strings([b"hello?>", b"ab"], [1, 2])],
           lambda s: np.array([[base64.urlsafe_b64encode(v) for v in s[0]]], object),
           name="pad"),
    OpCase("DecodeBase64", lambda s: parsing_ops.decode_base64(s),
           [_strings([b"aGVsbG8_Pg", b"YQ==", b""])],
           lambda s: np.array([b"hello?>", b"a", b""], object)),
    OpCase("SparseToDense", lambda i, sh, v: parsing_ops.sparse_to_dense(i, sh, v, 0.5),
           [np.array([[0, 1], [1, 3], [2, 0]], np.int64), np.array([3, 4], np.int64),
            np.array([1.0, 2.0, 3.0], np.float32)],
           lambda i, sh, v: _s2d_ref(i, sh, v, 0.5), name="float32-int64"),
    OpCase("SparseToDense", lambda i, sh, v: parsing_ops.sparse_to_dense(i, sh, v, 0),
           [np.array([1, 4], np.int32), np.array([6], np.int32), np.array([7, 9], np.int32)],
           lambda i, sh, v: _s2d_ref(i, sh, v, 0), name="int32-1d"),
    OpCase("SparseToDense", lambda i, sh, v: parsing_ops.sparse_to_dense(i, sh, v, b"-"),
           [np.array([[0, 0], [1, 2]], np.int64), np.array([2, 3], np.int64),
            _strings([b"p", b"q"])],
           lambda i, sh, v: _s2d_ref(i, sh, v, b"-"), name="string"),
]

EXEMPT = {
    "ReadFile": "tests/dataio/test_parsing.py::test_read_and_write_file",
    "WriteFile": "tests/dataio/test_parsing.py::test_read_and_write_file",
}
