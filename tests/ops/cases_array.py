"""Harness cases for the array op family (ops/array_ops.py, joining_ops, slicing_ops,
gather_ops, creation_ops, diag_ops)."""

import numpy as np

# NOTE: imported for registration until the lead wires these modules into the packages.
from tensorweave.ops import (  # noqa: F401
    array_ops,
    creation_ops,
    diag_ops,
    gather_ops,
    joining_ops,
    slicing_ops,
)
from tensorweave.ops.apply import apply_op
from tensorweave.runtime.kernels.cpu import (  # noqa: F401
    array,
    creation,
    diag,
    gather,
    joining,
    slicing,
)
from tests.ops.harness import OpCase

F32 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
I32 = np.arange(12, dtype=np.int32).reshape(3, 4) * 3 - 5
I64 = np.arange(6, dtype=np.int64).reshape(2, 3) - 2
F64 = np.linspace(-1, 1, 15).reshape(3, 5)
BOOL = np.array([[True, False, True], [False, False, True]])
STR = np.array([[b"a", b"bb", b"c"], [b"dd", b"e", b""]], dtype=object)
C64 = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64).reshape(2, 3)


def i32(v):
    return np.array(v, dtype=np.int32)


def i64(v):
    return np.array(v, dtype=np.int64)


def op(op_type, **attrs):
    """A build function applying `op_type` to the case's inputs."""
    return lambda *xs: apply_op(op_type, *xs, **attrs)


def case(op_type, build, inputs, ref, **kw):
    return OpCase(op_type, build, inputs, ref, **kw)


def _ss(begin, end, strides, **masks):
    """StridedSlice case on F32 with constant spec."""
    return lambda x: apply_op("StridedSlice", x, i32(begin), i32(end), i32(strides), **masks)


IDENTITIES = [
    case("Identity", op("Identity"), [STR], lambda x: x, name="string"),
    case("IdentityN", lambda a, b: apply_op("IdentityN", [a, b])[0], [F32, STR],
         lambda a, b: [a, b]),
    case("StopGradient", op("StopGradient"), [I32], lambda x: x),
    case("PreventGradient", op("PreventGradient", message="no"), [F64], lambda x: x),
    case("Snapshot", op("Snapshot"), [BOOL], lambda x: x),
    case("GuaranteeConst", op("GuaranteeConst"), [F32], lambda x: x),
    case("GuaranteeConst", op("GuaranteeConst"), [STR], lambda x: x, name="string"),
    case("CheckNumerics", op("CheckNumerics", message="ok"), [F32], lambda x: x),
    case("CheckNumerics", op("CheckNumerics", message="ok"), [F64], lambda x: x, name="f64"),
    case("Print", lambda x, d: apply_op("Print", x, [d], message="case: "), [F32, I32],
         lambda x, d: x),
]

SHAPES = [
    case("Shape", op("Shape"), [F32], lambda x: i32(x.shape)),
    case("Shape", op("Shape", out_type=np.int64), [STR], lambda x: i64(x.shape), name="i64"),
    case("ShapeN", lambda a, b: apply_op("ShapeN", [a, b])[0], [F32, F32[0]],
         lambda a, b: [i32(a.shape), i32(b.shape)]),
    case("Size", op("Size"), [F32], lambda x: i32(x.size)),
    case("Size", op("Size", out_type=np.int64), [STR], lambda x: i64(x.size), name="i64"),
    case("Rank", op("Rank"), [F32], lambda x: i32(x.ndim)),
    case("Reshape", op("Reshape"), [F32, i32([4, -1])], lambda x, s: x.reshape(4, 6)),
    case("Reshape", op("Reshape"), [STR, i64([3, 2])], lambda x, s: x.reshape(3, 2),
         name="string"),
    case("Reshape", op("Reshape"), [I32, i32([-1])], lambda x, s: x.reshape(-1), name="flat"),
    case("Squeeze", op("Squeeze"), [F32.reshape(2, 1, 12, 1)],
         lambda x: x.reshape(2, 12)),
    case("Squeeze", op("Squeeze", squeeze_dims=[-1]), [STR.reshape(2, 3, 1)],
         lambda x: x.reshape(2, 3), name="axis"),
    case("ExpandDims", op("ExpandDims"), [F32, i32(1)], lambda x, d: x[:, None]),
    case("ExpandDims", op("ExpandDims"), [STR, i64(-1)], lambda x, d: x[..., None],
         name="string"),
    case("Bitcast", op("Bitcast", type=np.int32), [F32], lambda x: x.view(np.int32)),
    case("Bitcast", op("Bitcast", type=np.uint8), [I32],
         lambda x: x[..., None].view(np.uint8), name="narrow"),
    case("Bitcast", op("Bitcast", type=np.float32),
         [np.arange(24, dtype=np.uint8).reshape(2, 3, 4)],
         lambda x: x.view(np.float32).reshape(2, 3), name="widen"),
]

JOINING = [
    case("ConcatV2", lambda a, b, ax: apply_op("ConcatV2", [a, b], ax),
         [F32, F32[:, :2], i32(1)], lambda a, b, ax: np.concatenate([a, b], 1)),
    case("ConcatV2", lambda a, b, ax: apply_op("ConcatV2", [a, b], ax),
         [STR, STR[:1], i64(0)], lambda a, b, ax: np.concatenate([a, b], 0), name="string"),
    case("ConcatV2", lambda a, b, ax: apply_op("ConcatV2", [a, b], ax),
         [I64, I64, i32(-1)], lambda a, b, ax: np.concatenate([a, b], -1), name="neg"),
    case("Pack", lambda a, b: apply_op("Pack", [a, b], axis=1), [F32, F32 * 2],
         lambda a, b: np.stack([a, b], 1)),
    case("Pack", lambda a, b, c: apply_op("Pack", [a, b, c], axis=-1), [STR, STR, STR],
         lambda a, b, c: np.stack([a, b, c], -1), name="string"),
    case("Tile", op("Tile"), [I32, i32([2, 3])], lambda x, m: np.tile(x, [2, 3])),
    case("Tile", op("Tile"), [STR, i64([1, 2])], lambda x, m: np.tile(x, [1, 2]),
         name="string"),
    case("Pad", op("Pad"), [F32, i32([[0, 1], [2, 0], [1, 1]])],
         lambda x, p: np.pad(x, [(0, 1), (2, 0), (1, 1)])),
    case("Pad", op("Pad"), [STR, i64([[1, 0], [0, 2]])],
         lambda x, p: np.array([[b""] * 5] + [list(r) + [b"", b""] for r in x], dtype=object),
         name="string"),
    case("PadV2", op("PadV2"), [I32, i32([[1, 2], [0, 1]]), i32(7)],
         lambda x, p, c: np.pad(x, [(1, 2), (0, 1)], constant_values=7)),
    case("MirrorPad", op("MirrorPad", mode="REFLECT"), [I32, i32([[2, 1], [3, 0]])],
         lambda x, p: np.pad(x, [(2, 1), (3, 0)], mode="reflect")),
    case("MirrorPad", op("MirrorPad", mode="SYMMETRIC"), [F64, i64([[3, 0], [1, 5]])],
         lambda x, p: np.pad(x, [(3, 0), (1, 5)], mode="symmetric"), name="symmetric"),
    case("ReverseV2", op("ReverseV2"), [F32, i32([0, 2])], lambda x, a: x[::-1, :, ::-1]),
    case("ReverseV2", op("ReverseV2"), [STR, i64([-1])], lambda x, a: x[:, ::-1],
         name="string"),
    case("Transpose", op("Transpose"), [F32, i32([2, 0, 1])],
         lambda x, p: x.transpose(2, 0, 1)),
    case("Transpose", op("Transpose"), [STR, i64([1, 0])], lambda x, p: x.T, name="string"),
    case("ConjugateTranspose", op("ConjugateTranspose"), [C64, i32([1, 0])],
         lambda x, p: np.conj(x.T)),
    case("BroadcastTo", op("BroadcastTo"), [F32[0, :, :1], i32([2, 3, 5])],
         lambda x, s: np.broadcast_to(x, (2, 3, 5))),
    case("BroadcastTo", op("BroadcastTo"), [STR[0], i64([4, 3])],
         lambda x, s: np.broadcast_to(x, (4, 3)), name="string"),
    case("BroadcastArgs", op("BroadcastArgs"), [i32([2, 1, 3]), i32([4, 1])],
         lambda a, b: i32([2, 4, 3])),
    case("SpaceToDepth", op("SpaceToDepth", block_size=2),
         [np.arange(48, dtype=np.float32).reshape(1, 4, 6, 2)],
         lambda x: x.reshape(1, 2, 2, 3, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 3, 8)),
    case("DepthToSpace", op("DepthToSpace", block_size=2),
         [np.arange(48, dtype=np.int32).reshape(1, 2, 3, 8)],
         lambda x: x.reshape(1, 2, 3, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(1, 4, 6, 2)),
    case("DepthToSpace", op("DepthToSpace", block_size=2, data_format="NCHW"),
         [np.arange(48, dtype=np.int32).reshape(1, 8, 2, 3)],
         lambda x: x.transpose(0, 2, 3, 1).reshape(1, 2, 3, 2, 2, 2).transpose(
             0, 1, 3, 2, 4, 5).reshape(1, 4, 6, 2).transpose(0, 3, 1, 2), name="nchw"),
]

SLICING = [
    case("Slice", op("Slice"), [F32, i32([1, 0, 1]), i32([1, -1, 2])],
         lambda x, b, s: x[1:2, 0:, 1:3]),
    case("Slice", op("Slice"), [STR, i64([0, 1]), i64([2, 2])], lambda x, b, s: x[:, 1:3],
         name="string"),
    case("StridedSlice", _ss([1, 0, 3], [2, 3, 0], [1, 2, -1]), [F32],
         lambda x: x[1:2, 0:3:2, 3:0:-1]),
    case("StridedSlice", _ss([0, 1], [0, 0], [1, 1], ellipsis_mask=1, shrink_axis_mask=2),
         [F32], lambda x: x[..., 1], name="ellipsis_shrink"),
    case("StridedSlice", _ss([0, 0, 2], [0, 0, 0], [1, 1, -1], new_axis_mask=1, begin_mask=2,
                             end_mask=6), [F32], lambda x: x[None, :, 2::-1], name="newaxis"),
    case("StridedSlice", lambda x: apply_op("StridedSlice", x, i64([-1]), i64([0]), i64([1]),
                                            shrink_axis_mask=1),
         [STR], lambda x: x[-1], name="string"),
    case("Split", lambda d, x: apply_op("Split", d, x, num_split=2)[0], [i32(2), F32],
         lambda d, x: np.split(x, 2, axis=2)),
    case("Split", lambda d, x: apply_op("Split", d, x, num_split=3)[0], [i32(-1), STR],
         lambda d, x: np.split(x, 3, axis=-1), name="string"),
    case("SplitV", lambda x, s, d: apply_op("SplitV", x, s, d, num_split=3)[0],
         [F32, i32([1, -1, 2]), i32(2)], lambda x, s, d: np.split(x, [1, 2], axis=2)),
    # one piece: the input itself (char-rnn's tf.split(inputs, seq_length=1, 1) at sampling)
    case("Split", lambda d, x: apply_op("Split", d, x, num_split=1)[0], [i32(1), F32],
         lambda d, x: [x], name="one"),
    case("SplitV", lambda x, s, d: apply_op("SplitV", x, s, d, num_split=1)[0],
         [F32, i32([-1]), i32(0)], lambda x, s, d: [x], name="one"),
    case("Unpack", lambda x: apply_op("Unpack", x, num=3, axis=1)[0], [F32],
         lambda x: [x[:, i] for i in range(3)]),
    case("Unpack", lambda x: apply_op("Unpack", x, num=2)[0], [STR],
         lambda x: [x[0], x[1]], name="string"),
]

CREATION = [
    case("Fill", op("Fill"), [i32([2, 3]), np.float32(1.5)],
         lambda d, v: np.full((2, 3), 1.5, np.float32)),
    case("Fill", op("Fill"), [i64([3, 1]), np.array(b"x", dtype=object)],
         lambda d, v: np.full((3, 1), b"x", dtype=object), name="string"),
    case("ZerosLike", op("ZerosLike"), [I32], np.zeros_like),
    case("ZerosLike", op("ZerosLike"), [BOOL], np.zeros_like, name="bool"),
    case("OnesLike", op("OnesLike"), [F64], np.ones_like),
    case("Range", op("Range"), [i32(3), i32(17), i32(4)],
         lambda a, b, c: np.arange(3, 17, 4, dtype=np.int32)),
    case("Range", op("Range"), [np.float32(1), np.float32(-1), np.float32(-0.5)],
         lambda a, b, c: np.arange(1, -1, -0.5, dtype=np.float32), name="float"),
    case("Range", op("Range"), [i64(0), i64(5), i64(1)],
         lambda a, b, c: np.arange(5, dtype=np.int64), name="i64"),
]

DIAG = [
    case("Diag", op("Diag"), [F32[0, :2, :3]],
         lambda x: np.diag(x.reshape(-1)).reshape(2, 3, 2, 3)),
    case("DiagPart", op("DiagPart"), [np.arange(36, dtype=np.int32).reshape(2, 3, 2, 3)],
         lambda x: np.diag(x.reshape(6, 6)).reshape(2, 3)),
    case("MatrixDiag", op("MatrixDiag"), [F32[:, :, :3]],
         lambda x: np.einsum("bij,jk->bijk", x, np.eye(3, dtype=np.float32))),
    case("MatrixDiagPart", op("MatrixDiagPart"), [F32],
         lambda x: np.diagonal(x, axis1=-2, axis2=-1)),
    case("MatrixBandPart", op("MatrixBandPart"), [F32, i64(1), i64(0)],
         lambda x, lo, up: x * np.tril(np.triu(np.ones((3, 4)), -1))),
    case("MatrixBandPart", op("MatrixBandPart"), [I32, i32(-1), i32(1)],
         lambda x, lo, up: x * np.tril(np.ones((3, 4), np.int32), 1), name="neg"),
]

GATHER = [
    case("Gather", op("Gather"), [F32, i32([[1, 0, 1]])], lambda p, i: p[i]),
    case("GatherV2", op("GatherV2"), [F32, i32([3, 0]), i32(2)],
         lambda p, i, a: np.take(p, i, axis=2)),
    case("GatherV2", op("GatherV2"), [STR, i64([[1], [0]]), i32(0)],
         lambda p, i, a: p[i], name="string"),
    case("GatherV2", op("GatherV2", batch_dims=1), [F32, i32([[2, 0], [1, 1]]), i32(1)],
         lambda p, i, a: np.stack([p[0][[2, 0]], p[1][[1, 1]]]), name="batch_dims"),
    case("GatherNd", op("GatherNd"), [F32, i32([[1, 2], [0, 0]])],
         lambda p, i: np.stack([p[1, 2], p[0, 0]])),
    case("GatherNd", op("GatherNd"), [STR, i64([[[1, 0]], [[0, 2]]])],
         lambda p, i: np.array([[p[1, 0]], [p[0, 2]]], dtype=object), name="string"),
    case("ScatterNd", op("ScatterNd"),
         [i32([[1], [3], [1]]), np.arange(15, dtype=np.float32).reshape(3, 5), i32([4, 5])],
         lambda i, u, s: np.stack([np.zeros(5), u[0] + u[2], np.zeros(5), u[1]]).astype(
             np.float32)),
    case("OneHot", op("OneHot"), [i32([[0, 2], [1, 5]]), i32(3), np.float32(2), np.float32(-1)],
         lambda i, d, on, off: np.where(i[..., None] == np.arange(3), 2, -1).astype(
             np.float32)),
    case("OneHot", op("OneHot", axis=0), [i64([0, 2, -1, 1]), i32(3), i32(1), i32(0)],
         lambda i, d, on, off: (i[None, :] == np.arange(3)[:, None]).astype(np.int32),
         name="axis0"),
    case("Where", op("Where"), [BOOL], lambda x: np.argwhere(x), exact_static_shape=False),
    case("Where", op("Where"), [I32], lambda x: np.argwhere(x), name="int",
         exact_static_shape=False),
    case("Select", op("Select"), [BOOL, BOOL[::-1] * 1.0, -np.ones((2, 3))],
         lambda c, t, e: np.where(c, t, e)),
    case("Select", op("Select"), [np.array([True, False]), STR, STR[::-1]],
         lambda c, t, e: np.where(c[:, None], t, e), name="rows"),
    case("SelectV2", op("SelectV2"), [BOOL[0], I32[:2, :3], i32(0)],
         lambda c, t, e: np.where(c, t, e)),
    case("Unique", lambda x: apply_op("Unique", x), [i32([4, 1, 4, 2, 1, 7])],
         lambda x: [i32([4, 1, 2, 7]), i32([0, 1, 0, 2, 1, 3])], exact_static_shape=False),
    case("Unique", lambda x: apply_op("Unique", x, out_idx=np.int64),
         [np.array([b"b", b"a", b"b"], dtype=object)],
         lambda x: [np.array([b"b", b"a"], dtype=object), i64([0, 1, 0])], name="string",
         exact_static_shape=False),
    case("ListDiff", lambda x, y: apply_op("ListDiff", x, y), [i32([1, 2, 3, 4, 5]), i32([4, 1])],
         lambda x, y: [i32([2, 3, 5]), i32([1, 2, 4])], exact_static_shape=False),
    case("InvertPermutation", op("InvertPermutation"), [i32([2, 0, 3, 1])],
         lambda x: np.argsort(x).astype(np.int32)),
]

CASES = IDENTITIES + SHAPES + JOINING + SLICING + CREATION + DIAG + GATHER
