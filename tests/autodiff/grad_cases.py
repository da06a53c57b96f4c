"""Gradient cases: for each op type with a gradient function, a small graph using it whose
symbolic Jacobian `test_grad_cases.py` compares with central differences.

A `GradCase` names the op types whose gradient functions it exercises (each must appear in
the built graph), builds `y` from input tensors, and gives the inputs' values (non-square,
away from kinks of non-smooth ops). `needs` lists other op types the gradient itself builds
(e.g. MaxPoolGradGrad); when one is not registered yet the case skips, naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tensorweave import dtypes
from tensorweave.ops.apply import apply_op as A

F32, F64 = np.float32, np.float64
_RNG = np.random.default_rng(1234)


@dataclass
class GradCase:
    ops: tuple
    build: Callable
    inputs: list
    name: str = ""
    wrt: tuple | None = None       # inputs to differentiate (default: every floating one)
    dynamic: bool = True           # also build on placeholders of unknown shape
    needs: tuple = ()
    delta: float = 1e-3
    atol: float = 1e-5
    rtol: float = 1e-4

    @property
    def id(self) -> str:
        return f"{'+'.join(self.ops)}{'-' + self.name if self.name else ''}"

    def wrt_indices(self) -> tuple:
        if self.wrt is not None:
            return self.wrt
        return tuple(i for i, a in enumerate(self.inputs) if np.asarray(a).dtype.kind == "f")


def u(lo, hi, shape=(2, 3), dt=F64):
    return _RNG.uniform(lo, hi, size=shape).astype(dt)


def signed(shape=(2, 3), lo=0.2, hi=2.0, dt=F64):
    """Values bounded away from 0 (for kinks at 0), with both signs."""
    mag = _RNG.uniform(lo, hi, size=shape)
    sign = np.where(_RNG.uniform(size=shape) < 0.5, -1.0, 1.0)
    return (mag * sign).astype(dt)


def distinct(shape, dt=F64, gap=0.3):
    """Distinct values, shuffled, at least `gap` apart (for max/min/sort ties)."""
    n = int(np.prod(shape))
    return (_RNG.permutation(n) * gap - n * gap / 2 + 0.05).reshape(shape).astype(dt)


def f32_tol(case: GradCase) -> GradCase:
    case.delta, case.atol, case.rtol = 1e-2, 2e-3, 2e-2
    return case


CASES: list[GradCase] = []


def add(*cases: GradCase) -> None:
    CASES.extend(cases)


def _weighted(parts):
    """One tensor from several (flattened, the first left out when there are three or more,
    each scaled differently), so each part's gradient is distinguishable."""
    keep = parts[1:] if len(parts) > 2 else parts
    flat = [A("Reshape", p, [-1]) * float(i + 1) for i, p in enumerate(keep)]
    return A("ConcatV2", flat, 0)


# == math: unary ================================================================================
_UNARY_DOMAINS = {
    "Abs": signed(), "Neg": u(-2, 2), "Reciprocal": signed(lo=0.5), "Inv": signed(lo=0.5),
    "Square": u(-2, 2), "Sqrt": u(0.5, 2), "Rsqrt": u(0.5, 2), "Exp": u(-1, 1),
    "Expm1": u(-1, 1), "Log": u(0.5, 2), "Log1p": u(-0.5, 2), "Sinh": u(-1, 1),
    "Cosh": u(-1, 1), "Tanh": u(-1.5, 1.5), "Asinh": u(-2, 2), "Acosh": u(1.5, 3),
    "Atanh": u(-0.8, 0.8), "Erf": u(-1.5, 1.5), "Erfc": u(-1.5, 1.5), "Lgamma": u(0.5, 3),
    "Sigmoid": u(-3, 3), "Sign": signed(), "Sin": u(-2, 2), "Cos": u(-2, 2),
    "Tan": u(-1, 1), "Asin": u(-0.8, 0.8), "Acos": u(-0.8, 0.8), "Atan": u(-2, 2),
}
for _op, _x in _UNARY_DOMAINS.items():
    add(GradCase((_op,), lambda x, _op=_op: A(_op, x), [_x]))
add(GradCase(("Digamma",), lambda x: A("Digamma", x), [u(0.5, 3)], needs=("Polygamma",)))
for _op in ("Floor", "Ceil", "Round", "Rint"):
    # no gradient through the step; x * 2 keeps x connected (d/dx = 2 everywhere)
    add(GradCase((_op,), lambda x, _op=_op: A(_op, x) + x * 2.0,
                 [np.array([[0.3, 1.2, -0.7], [2.2, -1.3, 0.1]])]))

# second order: the fused *Grad ops (inputs y, dy)
add(GradCase(("SigmoidGrad",), lambda y, dy: A("SigmoidGrad", y, dy), [u(0.1, 0.9), u(-1, 1)]),
    GradCase(("TanhGrad",), lambda y, dy: A("TanhGrad", y, dy), [u(-0.9, 0.9), u(-1, 1)]),
    GradCase(("SqrtGrad",), lambda y, dy: A("SqrtGrad", y, dy), [u(0.5, 2), u(-1, 1)]),
    GradCase(("RsqrtGrad",), lambda y, dy: A("RsqrtGrad", y, dy), [u(0.5, 2), u(-1, 1)]),
    GradCase(("ReciprocalGrad",), lambda y, dy: A("ReciprocalGrad", y, dy),
             [u(0.5, 2), u(-1, 1)]),
    GradCase(("InvGrad",), lambda y, dy: A("InvGrad", y, dy), [u(0.5, 2), u(-1, 1)]))

# == math: binary (broadcasting [2,3] with [3]) ===================================================
_BINARY = {
    "Add": (u(-1, 1), u(-1, 1, (3,))), "AddV2": (u(-1, 1), u(-1, 1, (3,))),
    "Sub": (u(-1, 1), u(-1, 1, (3,))), "Mul": (u(-1, 1), u(-1, 1, (3,))),
    "Div": (u(-1, 1), u(0.5, 2, (3,))), "RealDiv": (u(-1, 1), u(0.5, 2, (3,))),
    "DivNoNan": (u(-1, 1), u(0.5, 2, (3,))), "MulNoNan": (u(-1, 1), u(0.5, 2, (3,))),
    "Pow": (u(0.5, 2), u(-1, 2, (3,))), "SquaredDifference": (u(-1, 1), u(-1, 1, (3,))),
    "Atan2": (u(-1, 1), u(0.5, 2, (3,))), "Xlogy": (u(0.5, 2), u(0.5, 2, (3,))),
    "Xdivy": (u(0.5, 2), u(0.5, 2, (3,))),
    "Maximum": (distinct((2, 3)), distinct((3,), gap=0.37)),
    "Minimum": (distinct((2, 3)), distinct((3,), gap=0.37)),
    "FloorMod": (np.array([[1.3, 2.6, -0.7], [3.4, -2.2, 0.4]]), np.array([1.1, 0.9, 1.7])),
}
for _op, (_x, _y) in _BINARY.items():
    add(GradCase((_op,), lambda x, y, _op=_op: A(_op, x, y), [_x, _y]))
add(GradCase(("AddV2",), lambda x, y: A("AddV2", x, y), [u(-1, 1, (2, 1)), u(-1, 1, (1, 3))],
             name="both_broadcast"),
    GradCase(("Mul",), lambda x, y: A("Mul", x, y), [u(-1, 1, (4, 1, 3)), u(-1, 1, (2, 1))],
             name="rank3"),
    GradCase(("Sub",), lambda x, y: A("Sub", x, y), [u(-1, 1), u(-1, 1)], name="same_shape"),
    GradCase(("Mul",), lambda x, y: A("Mul", x, y), [u(-1, 1), u(-1, 1, ())], name="scalar"),
    GradCase(("FloorDiv",), lambda x, y: A("FloorDiv", x, y) + x * y,
             [np.array([[1.3, 2.6, -0.7], [3.4, -2.2, 0.4]]), np.array([1.1, 0.9, 1.7])]),
    GradCase(("TruncateDiv",), lambda x: A("Cast", A("TruncateDiv", A("Cast", x, DstT=dtypes.int32),
                                                       A("Cast", x, DstT=dtypes.int32)),
                                            DstT=dtypes.float64) + x,
             [np.array([[1.3, 2.6, -1.7], [3.4, -2.2, 1.4]])]))

add(GradCase(("AddN",), lambda a, b, c: A("AddN", [a, b, c]), [u(-1, 1), u(-1, 1), u(-1, 1)]),
    GradCase(("AccumulateNV2",), lambda a, b: A("AccumulateNV2", [a, b], shape=[2, 3]),
             [u(-1, 1), u(-1, 1)], dynamic=False),
    GradCase(("Select",), lambda x, y: A("Select", np.array([[True, False, True],
                                                                [False, False, True]]), x, y),
             [u(-1, 1), u(-1, 1)]),
    GradCase(("SelectV2",), lambda x, y: A("SelectV2", np.array([True, False, True]), x, y),
             [u(-1, 1), u(-1, 1, (2, 1))]),
    GradCase(("ClipByValue",), lambda t, lo, hi: A("ClipByValue", t, lo, hi),
             [np.array([[-1.5, -0.2, 0.3], [1.7, 0.9, -0.8]]), np.array(-0.5), np.array(1.0)]),
    GradCase(("Cast",), lambda x: A("Cast", A("Square", A("Cast", x, DstT=dtypes.float32)),
                                    DstT=dtypes.float64), [u(-1, 1)], delta=1e-2, atol=1e-3,
             rtol=1e-3))

for _ta in (False, True):
    for _tb in (False, True):
        _a = u(-1, 1, (3, 2) if _ta else (2, 3))
        _b = u(-1, 1, (4, 3) if _tb else (3, 4))
        add(GradCase(("MatMul",), lambda a, b, _ta=_ta, _tb=_tb:
                     A("MatMul", a, b, transpose_a=_ta, transpose_b=_tb), [_a, _b],
                     name=f"ta{int(_ta)}tb{int(_tb)}"))
add(GradCase(("BatchMatMul",), lambda a, b: A("BatchMatMul", a, b, adj_y=True),
             [u(-1, 1, (2, 2, 3)), u(-1, 1, (2, 4, 3))]),
    GradCase(("BatchMatMulV2",), lambda a, b: A("BatchMatMulV2", a, b, adj_x=True),
             [u(-1, 1, (2, 1, 3, 2)), u(-1, 1, (3, 3, 4))], name="broadcast"),
    GradCase(("BatchMatMulV2",), lambda a, b: A("BatchMatMulV2", a, b),
             [u(-1, 1, (2, 2, 3)), u(-1, 1, (2, 3, 4))], name="same_batch"))

# complex numbers, seen through real-valued inputs and outputs
add(GradCase(("Complex", "ComplexAbs"),
             lambda a, b: A("ComplexAbs", A("Complex", a, b, Tout=dtypes.complex128),
                            Tout=dtypes.float64), [u(0.5, 2), u(0.5, 2, (3,))]),
    GradCase(("Real", "Imag"), lambda a, b: A("Real", A("Complex", a, b,
                                                           Tout=dtypes.complex128) *
                                                 A("Complex", b, a, Tout=dtypes.complex128),
                                                 Tout=dtypes.float64)
             + A("Imag", A("Square", A("Complex", a, b, Tout=dtypes.complex128)),
                 Tout=dtypes.float64), [u(-1, 1), u(-1, 1)]),
    GradCase(("Angle",), lambda a, b: A("Angle", A("Complex", a, b, Tout=dtypes.complex128),
                                        Tout=dtypes.float64), [u(0.5, 2), u(0.5, 2)]),
    GradCase(("Conj",), lambda a, b: A("Imag", A("Conj", A("Complex", a, b,
                                                           Tout=dtypes.complex128)) *
                                        A("Complex", b, a, Tout=dtypes.complex128),
                                        Tout=dtypes.float64), [u(-1, 1), u(-1, 1)]))

# scans and reductions
add(GradCase(("Cumsum",), lambda x: A("Cumsum", x, 1), [u(-1, 1)]),
    GradCase(("Cumsum",), lambda x: A("Cumsum", x, 0, exclusive=True, reverse=True),
             [u(-1, 1)], name="exclusive_reverse"),
    GradCase(("Cumprod",), lambda x: A("Cumprod", x, 1, reverse=True), [u(0.5, 1.5)]),
    GradCase(("Sum",), lambda x: A("Sum", x, [0, 1]), [u(-1, 1)], name="all"),
    GradCase(("Sum",), lambda x: A("Sum", x, 1), [u(-1, 1, (2, 3, 4))], name="axis1"),
    GradCase(("Sum",), lambda x: A("Sum", x, [-1, 0], keep_dims=True), [u(-1, 1, (2, 3, 4))],
             name="keep_dims"),
    GradCase(("Mean",), lambda x: A("Mean", x, [0]), [u(-1, 1, (2, 3, 4))]),
    GradCase(("Mean",), lambda x: A("Mean", x, [0, 1, 2]), [u(-1, 1, (2, 3, 4))], name="all"),
    GradCase(("Max",), lambda x: A("Max", x, 1), [distinct((2, 3, 4))]),
    GradCase(("Min",), lambda x: A("Min", x, [0, 2], keep_dims=True), [distinct((2, 3, 4))]),
    GradCase(("Prod",), lambda x: A("Prod", x, 1), [u(0.5, 1.5, (2, 3, 4))]),
    GradCase(("Prod",), lambda x: A("Prod", x, [0, 2]),
             [np.array([[[0.0, 1.2], [0.7, 1.1]], [[1.3, 0.9], [0.6, 0.0]]])], name="zeros"),
    GradCase(("EuclideanNorm",), lambda x: A("EuclideanNorm", x, 1), [u(0.5, 1.5)]),
    GradCase(("ArgMax", "ArgMin"),
             lambda x: x * A("Cast", A("Sum", A("ArgMax", x, 1) + A("ArgMin", x, 1), 0),
                             DstT=dtypes.float64), [distinct((2, 3))]))

# segments
_IDS = np.array([0, 0, 1, 2], np.int32)
_UIDS = np.array([2, 0, -1, 1, 2], np.int32)
for _op in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"):
    _d = distinct((4, 3)) if _op in ("SegmentMax", "SegmentMin") else u(0.5, 1.5, (4, 3))
    add(GradCase((_op,), lambda d, _op=_op: A(_op, d, _IDS), [_d]))
for _op in ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
            "UnsortedSegmentProd"):
    _d = distinct((5, 3)) if "M" in _op[15:] else u(0.5, 1.5, (5, 3))
    add(GradCase((_op,), lambda d, _op=_op: A(_op, d, _UIDS, 3), [_d]))
add(GradCase(("UnsortedSegmentProd",), lambda d: A("UnsortedSegmentProd", d, _UIDS, 3),
             [np.array([[0.0, 1.2, 0.5], [1.1, 0.0, 0.8], [0.3, 0.4, 0.5], [0.0, 0.7, 1.3],
                        [0.9, 0.6, 0.0]])],
             name="zeros"))

# == array ======================================================================================
add(GradCase(("Reshape",), lambda x: A("Reshape", x, [3, 2]), [u(-1, 1)]),
    GradCase(("Squeeze",), lambda x: A("Squeeze", x, squeeze_dims=[1]), [u(-1, 1, (2, 1, 3))]),
    GradCase(("ExpandDims",), lambda x: A("ExpandDims", x, 1), [u(-1, 1)]),
    GradCase(("Transpose",), lambda x: A("Transpose", x, [2, 0, 1]), [u(-1, 1, (2, 3, 4))]),
    GradCase(("ConjugateTranspose",), lambda x: A("ConjugateTranspose", x, [1, 0]), [u(-1, 1)]),
    GradCase(("ConcatV2",), lambda a, b: A("ConcatV2", [a, b], 1),
             [u(-1, 1), u(-1, 1, (2, 4))]),
    GradCase(("ConcatV2",), lambda a, b, c: A("ConcatV2", [a, b, c], -2),
             [u(-1, 1), u(-1, 1, (1, 3)), u(-1, 1, (4, 3))], name="three_axis0"),
    GradCase(("Pack",), lambda a, b: A("Pack", [a, b], axis=1), [u(-1, 1), u(-1, 1)]),
    GradCase(("Unpack",), lambda x: _weighted(A("Unpack", x, num=3, axis=1)[0]),
             [u(-1, 1, (2, 3, 2))]),
    GradCase(("Split",), lambda x: A("Split", 1, x, num_split=2)[0][1] * 3.0, [u(-1, 1, (2, 4))]),
    GradCase(("SplitV",), lambda x: _weighted(A("SplitV", x, [1, 3], 1, num_split=2)[0]),
             [u(-1, 1, (2, 4))]),
    GradCase(("Tile",), lambda x: A("Tile", x, [2, 3]), [u(-1, 1)]),
    GradCase(("Slice",), lambda x: A("Slice", x, [1, 0], [1, 2]), [u(-1, 1, (3, 4))]),
    GradCase(("StridedSlice",), lambda x: A("StridedSlice", x, [1, 3], [3, 0], [1, -2]),
             [u(-1, 1, (3, 4))], name="negative_stride"),
    GradCase(("StridedSlice",), lambda x: A("StridedSlice", x, [0, 1], [0, 2], [1, 1],
                                            ellipsis_mask=1, shrink_axis_mask=2),
             [u(-1, 1, (2, 3, 4))], name="ellipsis_shrink"),
    GradCase(("StridedSlice",), lambda x: A("StridedSlice", x, [0, 0], [2, 0], [1, 1],
                                            new_axis_mask=2), [u(-1, 1)], name="new_axis"),
    GradCase(("StridedSliceGrad",), lambda dy: A("StridedSliceGrad", [3, 4], [1, 3], [3, 0],
                                                 [1, -2], dy), [u(-1, 1, (2, 2))]),
    GradCase(("Pad",), lambda x: A("Pad", x, [[1, 0], [2, 1]]), [u(-1, 1)]),
    GradCase(("PadV2",), lambda x: A("PadV2", x, [[0, 2], [1, 1]], 0.5), [u(-1, 1)]),
    GradCase(("MirrorPad",), lambda x: A("MirrorPad", x, [[1, 1], [2, 0]], mode="REFLECT"),
             [u(-1, 1, (3, 4))], needs=("MirrorPadGrad",)),
    GradCase(("ReverseV2",), lambda x: A("ReverseV2", x, [1]), [u(-1, 1)]),
    GradCase(("Identity", "Snapshot", "CheckNumerics"),
             lambda x: A("CheckNumerics", A("Snapshot", A("Identity", x)), message="m"),
             [u(-1, 1)]),
    GradCase(("IdentityN",), lambda a, b: _weighted(A("IdentityN", [a, b])[0]),
             [u(-1, 1), u(-1, 1)]),
    GradCase(("Print",), lambda x: A("Print", x, [x], message="p", first_n=0) * 2.0,
             [u(-1, 1)]),
    GradCase(("PlaceholderWithDefault",),
             lambda x: A("PlaceholderWithDefault", x, shape=[None, 3]) * 3.0, [u(-1, 1)]),
    GradCase(("BroadcastTo",), lambda x: A("BroadcastTo", x, [4, 2, 3]), [u(-1, 1, (2, 1))]),
    GradCase(("Fill",), lambda v: A("Fill", [2, 3], v), [np.array(0.7)]),
    GradCase(("Diag",), lambda x: A("Diag", x), [u(-1, 1, (3,))]),
    GradCase(("DiagPart",), lambda x: A("DiagPart", x), [u(-1, 1, (3, 3))]),
    GradCase(("MatrixDiag",), lambda x: A("MatrixDiag", x), [u(-1, 1)]),
    GradCase(("MatrixDiagPart",), lambda x: A("MatrixDiagPart", x), [u(-1, 1, (2, 3, 3))]),
    GradCase(("MatrixDiagPart",), lambda x: A("MatrixDiagPart", x), [u(-1, 1, (2, 3, 4))],
             name="non_square", dynamic=False),
    GradCase(("MatrixBandPart",), lambda x: A("MatrixBandPart", x, 1, 0), [u(-1, 1, (3, 4))]),
    GradCase(("SpaceToDepth",), lambda x: A("SpaceToDepth", x, block_size=2),
             [u(-1, 1, (1, 4, 2, 3))]),
    GradCase(("DepthToSpace",), lambda x: A("DepthToSpace", x, block_size=2),
             [u(-1, 1, (1, 2, 1, 8))]),
    GradCase(("SparseToDense",), lambda v, d: A("SparseToDense", np.array([[0, 1], [1, 2]]),
                                                np.array([2, 3]), v, d),
             [u(-1, 1, (2,)), np.array(0.3)]))

# gathers and scatters
add(GradCase(("Gather",), lambda p: A("Gather", p, np.array([[2, 0], [2, 1]], np.int32)),
             [u(-1, 1, (3, 2))]),
    GradCase(("GatherV2",), lambda p: A("GatherV2", p, np.array([1, 1, 0], np.int32), 0),
             [u(-1, 1, (3, 2))], name="axis0"),
    GradCase(("GatherV2",), lambda p: A("GatherV2", p, np.array([[2, 0], [2, 2]], np.int32), 1),
             [u(-1, 1, (2, 3, 2))], name="axis1"),
    GradCase(("GatherV2",), lambda p: A("GatherV2", p, np.array([1, 0, 1], np.int32), -1),
             [u(-1, 1, (2, 3, 2))], name="axis_negative"),
    GradCase(("GatherV2",), lambda p: A("GatherV2", p, np.array([[0, 2], [1, 1]], np.int32), 1,
                                        batch_dims=1), [u(-1, 1, (2, 3, 2))], name="batch_dims"),
    GradCase(("GatherNd",), lambda p: A("GatherNd", p, np.array([[1], [0], [1]], np.int32)),
             [u(-1, 1, (2, 3))], name="rows"),
    GradCase(("GatherNd",), lambda p: A("GatherNd", p, np.array([[1, 2], [0, 0]], np.int32)),
             [u(-1, 1, (2, 3))], name="elements"),
    GradCase(("ScatterNd",), lambda v: A("ScatterNd", np.array([[1], [3]], np.int32), v,
                                         np.array([4, 3], np.int32)), [u(-1, 1)]))

# == nn ==========================================================================================
_IMG = (2, 5, 4, 3)   # NHWC
add(GradCase(("BiasAdd",), lambda x, b: A("BiasAdd", x, b), [u(-1, 1), u(-1, 1, (3,))]),
    GradCase(("BiasAdd",), lambda x, b: A("BiasAdd", x, b, data_format="NCHW"),
             [u(-1, 1, (2, 3, 2, 2)), u(-1, 1, (3,))], name="NCHW"),
    GradCase(("BiasAddV1",), lambda x, b: A("BiasAddV1", x, b), [u(-1, 1), u(-1, 1, (3,))]),
    GradCase(("BiasAddGrad",), lambda g: A("BiasAddGrad", g), [u(-1, 1, (2, 2, 3))]),
    GradCase(("BiasAddGrad",), lambda g: A("BiasAddGrad", g, data_format="NCHW"),
             [u(-1, 1, (2, 3, 2, 2))], name="NCHW"))
for _op in ("Relu", "Relu6", "Elu", "Selu", "Softplus", "Softsign", "LeakyRelu"):
    _x = signed(lo=0.2, hi=2.0) if _op != "Relu6" else np.array([[-1.0, 0.5, 5.5],
                                                                 [6.5, 3.0, -0.3]])
    add(GradCase((_op,), lambda x, _op=_op: A(_op, x), [_x]))
for _op, _y in (("ReluGrad", signed()), ("Relu6Grad", np.array([[-1.0, 0.5, 5.5],
                                                                 [6.5, 3.0, -0.3]])),
                ("EluGrad", signed(lo=0.2, hi=0.9)), ("SeluGrad", signed(lo=0.2, hi=0.9)),
                ("LeakyReluGrad", signed()), ("SoftplusGrad", u(-2, 2))):
    add(GradCase((_op,), lambda g, y, _op=_op: A(_op, g, y), [u(-1, 1), _y]))
add(GradCase(("Softmax",), lambda x: A("Softmax", x), [u(-2, 2)]),
    GradCase(("LogSoftmax",), lambda x: A("LogSoftmax", x), [u(-2, 2, (2, 2, 3))]),
    GradCase(("SoftmaxCrossEntropyWithLogits",),
             lambda f, lab: A("SoftmaxCrossEntropyWithLogits", f, lab)[0],
             [u(-2, 2, (2, 4)), np.array([[0.1, 0.2, 0.3, 0.4], [0.0, 1.0, 0.0, 0.0]])]),
    GradCase(("SoftmaxCrossEntropyWithLogits",),
             lambda f, lab: A("SoftmaxCrossEntropyWithLogits", f, lab)[1], [u(-2, 2, (2, 4)),
             np.array([[0.1, 0.2, 0.3, 0.4], [0.0, 1.0, 0.0, 0.0]])], name="backprop",
             wrt=(0,)),
    GradCase(("SparseSoftmaxCrossEntropyWithLogits",),
             lambda f: A("SparseSoftmaxCrossEntropyWithLogits", f, np.array([3, 0], np.int32))[0],
             [u(-2, 2, (2, 4))]),
    GradCase(("SparseSoftmaxCrossEntropyWithLogits",),
             lambda f: A("SparseSoftmaxCrossEntropyWithLogits", f, np.array([3, 0],
                                                                                np.int32))[1],
             [u(-2, 2, (2, 4))], name="backprop"),
    GradCase(("L2Loss",), lambda x: A("L2Loss", x), [u(-1, 1)]),
    GradCase(("LRN",), lambda x: A("LRN", x, depth_radius=1, bias=1.0, alpha=0.5, beta=0.75),
             [u(0.1, 1, (1, 2, 2, 4), F32)], needs=("LRNGrad",), delta=1e-2, atol=2e-3,
             rtol=2e-2),
    GradCase(("TopKV2",), lambda x: A("TopKV2", x, 2)[0], [distinct((2, 4))]),
    GradCase(("TopK",), lambda x: A("TopK", x, k=2)[0], [distinct((3, 4))]))

_CONV = {"strides": [1, 2, 1, 1], "padding": "SAME"}
add(GradCase(("Conv2D",), lambda x, w: A("Conv2D", x, w, **_CONV),
             [u(-1, 1, _IMG), u(-1, 1, (3, 2, 3, 2))]),
    GradCase(("Conv2D",), lambda x, w: A("Conv2D", x, w, strides=[1, 1, 1, 1], padding="VALID",
                                         data_format="NCHW"),
             [u(-1, 1, (1, 3, 4, 5)), u(-1, 1, (2, 2, 3, 2))], name="VALID_NCHW"),
    GradCase(("Conv2DBackpropInput",), lambda w, dy: A("Conv2DBackpropInput", list(_IMG), w, dy,
                                                       **_CONV),
             [u(-1, 1, (3, 2, 3, 2)), u(-1, 1, (2, 3, 4, 2))]),
    GradCase(("Conv2DBackpropFilter",), lambda x, dy: A("Conv2DBackpropFilter", x, [3, 2, 3, 2],
                                                        dy, **_CONV),
             [u(-1, 1, _IMG), u(-1, 1, (2, 3, 4, 2))]),
    GradCase(("DepthwiseConv2dNative",), lambda x, w: A("DepthwiseConv2dNative", x, w, **_CONV),
             [u(-1, 1, _IMG), u(-1, 1, (2, 2, 3, 2))]),
    GradCase(("DepthwiseConv2dNativeBackpropInput",),
             lambda w, dy: A("DepthwiseConv2dNativeBackpropInput", list(_IMG), w, dy, **_CONV),
             [u(-1, 1, (2, 2, 3, 2)), u(-1, 1, (2, 3, 4, 6))]),
    GradCase(("DepthwiseConv2dNativeBackpropFilter",),
             lambda x, dy: A("DepthwiseConv2dNativeBackpropFilter", x, [2, 2, 3, 2], dy, **_CONV),
             [u(-1, 1, _IMG), u(-1, 1, (2, 3, 4, 6))]))

_POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 1, 1], "padding": "VALID"}
add(GradCase(("MaxPool",), lambda x: A("MaxPool", x, **_POOL), [distinct(_IMG)]),
    GradCase(("MaxPoolV2",), lambda x: A("MaxPoolV2", x, _POOL["ksize"], _POOL["strides"],
                                         padding="SAME"), [distinct(_IMG)]),
    GradCase(("AvgPool",), lambda x: A("AvgPool", x, **_POOL), [u(-1, 1, _IMG)]),
    GradCase(("AvgPool",), lambda x: A("AvgPool", x, ksize=[1, 2, 3, 1], strides=[1, 1, 2, 1],
                                       padding="SAME"), [u(-1, 1, _IMG)], name="SAME"),
    GradCase(("AvgPoolGrad",), lambda g: A("AvgPoolGrad", list(_IMG), g, **_POOL),
             [u(-1, 1, (2, 2, 3, 3))]),
    GradCase(("MaxPoolGrad",), lambda x, g: A("MaxPoolGrad", x, A("MaxPool", x, **_POOL), g,
                                              **_POOL), [distinct(_IMG), u(-1, 1, (2, 2, 3, 3))],
             needs=("MaxPoolGradGrad",), wrt=(1,)),
    GradCase(("MaxPoolGradV2",), lambda x, g: A("MaxPoolGradV2", x, A("MaxPool", x, **_POOL), g,
                                                _POOL["ksize"], _POOL["strides"],
                                                padding="VALID"),
             [distinct(_IMG), u(-1, 1, (2, 2, 3, 3))], needs=("MaxPoolGradGradV2",), wrt=(1,)))


def _bn(kind, training, fmt="NHWC"):
    def build(x, scale, offset):
        c = scale.shape.as_tuple()[0] if scale.shape.ndims else 3
        if training:
            mean = var = np.zeros([0], F32)
        else:
            mean, var = np.linspace(-0.2, 0.3, c).astype(F32), np.linspace(0.5, 1.5, c).astype(F32)
        y = A(kind, x, scale, offset, mean, var, epsilon=0.01, is_training=training,
              data_format=fmt)[0]
        return y
    return build


for _kind in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
    for _training in (True, False):
        add(f32_tol(GradCase((_kind,), _bn(_kind, _training),
                             [u(-1, 1, (2, 3, 2, 3), F32), u(0.5, 1.5, (3,), F32),
                              u(-1, 1, (3,), F32)],
                             name="training" if _training else "inference", dynamic=False)))
add(f32_tol(GradCase(("FusedBatchNormV3",), _bn("FusedBatchNormV3", True, "NCHW"),
                     [u(-1, 1, (2, 3, 2, 2), F32), u(0.5, 1.5, (3,), F32), u(-1, 1, (3,), F32)],
                     name="training_NCHW", dynamic=False)),
    f32_tol(GradCase(("FusedBatchNormV3",), _bn("FusedBatchNormV3", False, "NCHW"),
                     [u(-1, 1, (2, 3, 2, 2), F32), u(0.5, 1.5, (3,), F32), u(-1, 1, (3,), F32)],
                     name="inference_NCHW", dynamic=False)))


def _bn_grad(kind):
    fwd = {"FusedBatchNormGrad": "FusedBatchNorm", "FusedBatchNormGradV2": "FusedBatchNormV2",
           "FusedBatchNormGradV3": "FusedBatchNormV3"}[kind]

    def build(dy, x, scale):
        saved = A(fwd, x, scale, np.zeros([3], F32), np.zeros([0], F32), np.zeros([0], F32),
                  epsilon=0.01)[3:]
        outs = A(kind, dy, x, scale, *saved, epsilon=0.01)[:3]
        return A("ConcatV2", [A("Reshape", outs[0], [-1]), outs[1], outs[2]], 0)
    return build


for _kind in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
    add(f32_tol(GradCase((_kind,), _bn_grad(_kind),
                         [u(-1, 1, (2, 2, 2, 3), F32), u(-1, 1, (2, 2, 2, 3), F32),
                          u(0.5, 1.5, (3,), F32)], dynamic=False)))


# == control flow ================================================================================
def _cond(pred):
    def build(x, y):
        from tensorweave.ops.control_flow_ops import cond

        return cond(pred, lambda: A("Square", x) * y, lambda: A("Sin", x) + y * 3.0)
    return build


add(GradCase(("Switch", "Merge"), _cond(True), [u(-1, 1), u(-1, 1)], name="true"),
    GradCase(("Switch", "Merge"), _cond(False), [u(-1, 1), u(-1, 1)], name="false"))


# == second-order max pooling; data flow: stitch, partition, reverse_sequence ==================
add(GradCase(("MaxPoolGradGrad",),
             lambda x, g: A("MaxPoolGradGrad", x, A("MaxPool", x, **_POOL), g, **_POOL),
             [distinct(_IMG), u(-1, 1, _IMG)], needs=("MaxPoolGrad",), wrt=(1,)))
_I32 = np.int32
add(GradCase(("DynamicStitch",),
             lambda a, b: A("DynamicStitch", [np.array([[0, 4], [6, 1]], _I32),
                                              np.array([2, 5, 3], _I32)], [a, b]),
             [u(-1, 1, (2, 2, 3)), u(-1, 1, (3, 3))]),
    GradCase(("ParallelDynamicStitch",),
             lambda a, b: A("ParallelDynamicStitch", [np.array([1, 3], _I32),
                                                      np.array([0, 2, 4], _I32)], [a, b]),
             [u(-1, 1, (2, 3)), u(-1, 1, (3, 3))]),
    GradCase(("DynamicPartition",),
             lambda x: A("ConcatV2", A("DynamicPartition", x, np.array([2, 0, 2, 1], _I32),
                                       num_partitions=3)[0], 0) * np.arange(1.0, 13.0).reshape(
                 4, 3), [u(-1, 1, (4, 3))], needs=("ParallelDynamicStitch",)),
    GradCase(("ReverseSequence",),
             lambda x: A("ReverseSequence", x, np.array([2, 0, 3], np.int64), seq_dim=1,
                         batch_dim=0) * np.arange(1.0, 13.0).reshape(3, 4),
             [u(-1, 1, (3, 4))]))


# == special functions (n of polygamma, x of zeta: no gradient, as TF); MirrorPadGrad =========
add(GradCase(("Polygamma",), lambda n, x: A("Polygamma", n, x), [np.array([[1.0], [2.0]]),
                                                                 u(0.5, 3, (3,))], wrt=(1,)),
    GradCase(("Zeta",), lambda x, q: A("Zeta", x, q), [np.array([[2.5], [3.0]]),
                                                       u(0.5, 3, (3,))], wrt=(1,)),
    GradCase(("Igamma",), lambda a, x: A("Igamma", a, x), [u(0.5, 4, (3, 1)),
                                                             u(0.3, 6, (4,))]),
    GradCase(("Igammac",), lambda a, x: A("Igammac", a, x), [u(0.5, 4, (2, 3)),
                                                               u(0.3, 6, (2, 3))]),
    # Betainc: TF defines the gradient in x only; x away from 0 and 1
    GradCase(("Betainc",), lambda a, b, x: A("Betainc", a, b, x),
             [u(0.6, 3, (2, 3)), u(0.6, 3, (2, 3)), u(0.1, 0.9, (2, 3))], wrt=(2,)),
    GradCase(("Betainc",), lambda a, b, x: A("Betainc", a, b, x),
             [np.float64(1.5), np.float64(0.8), u(0.1, 0.9, (3, 2))], wrt=(2,),
             name="scalar_params"),
    GradCase(("MirrorPadGrad",),
             lambda g: A("MirrorPadGrad", g, [[1, 1], [2, 0]], mode="SYMMETRIC"),
             [u(-1, 1, (4, 5))], needs=("MirrorPad",)),
    GradCase(("MirrorPadGrad",),
             lambda g: A("MirrorPadGrad", g, [[0, 2], [1, 1]], mode="REFLECT"),
             [u(-1, 1, (5, 5))], needs=("MirrorPad",), name="reflect"))


# == op types checked elsewhere ==================================================================
ELSEWHERE = {
    "MatrixInverse": "tests/autodiff/test_linalg_grad.py",
    "MatrixDeterminant": "tests/autodiff/test_linalg_grad.py",
    "LogMatrixDeterminant": "tests/autodiff/test_linalg_grad.py",
    "Cholesky": "tests/autodiff/test_linalg_grad.py",
    "MatrixSolve": "tests/autodiff/test_linalg_grad.py",
    "MatrixTriangularSolve": "tests/autodiff/test_linalg_grad.py",
    "SelfAdjointEigV2": "tests/autodiff/test_linalg_grad.py",
    "Qr": "tests/autodiff/test_linalg_grad.py",
    "Svd": "tests/autodiff/test_linalg_grad.py",
    "RefSwitch": "tests/autodiff/test_gradients.py::test_ref_switch_and_ref_merge",
    "RefMerge": "tests/autodiff/test_gradients.py::test_ref_switch_and_ref_merge",
    "PreventGradient": "tests/autodiff/test_gradients.py::test_prevent_gradient_raises",
    "Enter": "tests/autodiff/test_while_grad.py",
    "RefEnter": "tests/autodiff/test_while_grad.py",
    "Exit": "tests/autodiff/test_while_grad.py",
    "RefExit": "tests/autodiff/test_while_grad.py",
    "NextIteration": "tests/autodiff/test_while_grad.py",
    "RefNextIteration": "tests/autodiff/test_while_grad.py",
    "LoopCond": "tests/autodiff/test_while_grad.py",
    **{f"TensorArray{kind}V3": "tests/autodiff/test_tensor_array_grad.py"
       for kind in ("Read", "Write", "Gather", "Scatter", "Concat", "Split")},
    # image ops: gradients compared with TensorFlow's (tests/data/image_expected.npz)
    **{op: "tests/ops/test_image.py (gradients against TF's)"
       for op in ("ResizeBilinear", "ResizeBicubic", "ResizeNearestNeighbor", "CropAndResize",
                  "RGBToHSV", "ExtractImagePatches")},
}

# Differentiable-looking op types (floating inputs and outputs) that have no gradient, as in
# TensorFlow, with the reason. `gradients()` raises LookupError naming them.
NO_GRADIENT = {
    "Mod": "TF defines no gradient (FloorMod has one)",
    "TruncateMod": "TF defines no gradient",
    "LRNGrad": "TF defines no second-order LRN gradient",
    "SoftsignGrad": "TF defines no second-order Softsign gradient",
    "Bitcast": "reinterprets bits: not differentiable, TF defines none",
    "Unique": "TF defines no gradient",
    "ListDiff": "TF defines no gradient",
    "RandomPoisson": "random op, TF defines no gradient",
    "RandomPoissonV2": "random op, TF defines no gradient",
    "EagerPyFunc": "TF differentiates it with the eager tape only",
    "_FusedConv2D": "created by the remapper after gradients are built; TF defines none",
    "MaxPoolGradGradV2": "TF defines no gradient (MaxPoolGradGrad has one)",
    "_FusedMatMul": "created by the remapper after gradients are built; TF defines none",
    "_TwFusedElementwise": "created by an optimization pass after gradients are built",
    "XlaLaunch": "created by the mark_for_compilation pass after gradients are built; TF "
                 "defines none",
    "_TwFusedMaxPoolGradReluGrad": "created by the remapper from gradient ops, after "
                                   "gradients are built",
    "DecodeCSV": "parses strings; TF defines no gradient",
    "ParseExample": "parses strings; TF defines no gradient",
    "ParseExampleV2": "parses strings; TF defines no gradient",
    "ParseSingleExample": "parses strings; TF defines no gradient",
    **{op: "TF defines no gradient" for op in (
        "AdjustContrastv2", "AdjustHue", "AdjustSaturation", "ResizeArea", "ResizeBicubicGrad",
        "ResizeNearestNeighborGrad", "CropAndResizeGradImage", "CropAndResizeGradBoxes",
        "DrawBoundingBoxesV2")},
    "HSVToRGB": "TF marks it not differentiable",
    "GuaranteeConst": "TF registers no gradient (tf.gradients raises LookupError)",
    "ResizeBilinearGrad": "TF marks it not differentiable",
}

# Gradients checked against TensorFlow's gradient values (not finite differences) elsewhere.
ELSEWHERE.update({
    **{op: "tests/ops/test_sparse_ops.py (TF's gradients)" for op in (
        "SparseAdd", "SparseReorder", "SparseReduceSum", "SparseSlice", "SparseSoftmax",
        "SparseTensorDenseAdd", "SparseTensorDenseMatMul")},
    **{op: "tests/ops/test_sampled.py (finite differences; TF's lookups)" for op in (
        "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
        "SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
        "SparseSegmentSqrtNWithNumSegments", "SparseFillEmptyRows")},
    **{op: "tests/ops/test_math_extra.py (TF's gradients)" for op in (
        "Einsum", "Roll", "Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
        "MaxPool3D", "AvgPool3D", "AvgPool3DGrad")},
})
NO_GRADIENT.update({
    "IgammaGradA": "TF defines no gradient", "RandomGammaGrad": "TF defines no gradient",
    "SparseReduceMax": "TF defines no gradient",
    "SparseSparseMaximum": "TF defines no gradient",
    "SparseSparseMinimum": "TF defines no gradient",
    "SparseSplit": "TF defines no gradient",
    "MaxPool3DGrad": "TF's needs MaxPool3DGradGrad (not registered here)",
    "LookupTableFindV2": "a table lookup: TF defines no gradient",
})
# a Gamma sample's derivative in alpha is implicit (the CDF held fixed), not the pathwise
# derivative finite differences of one seeded stream would see
ELSEWHERE["RandomGamma"] = "tests/ops/test_igamma.py (TF's RandomGammaGrad on TF's samples)"

# == FFT ops (ops/signal_ops.py): real inputs → complex → transform → a real weighted sum =====
_FFT_W = u(-1, 1, (2, 4, 6)) + 1j * u(-1, 1, (2, 4, 6))


def _fft_loss(z):
    """Re and Im of every output weighted differently (outputs fit in (2, 4, 6))."""
    from tensorweave.ops import array_ops as _ao
    from tensorweave.ops import slicing_ops as _so

    w = _so.slice(_FFT_W, [0, 0, 0], _ao.shape(z)) if z.dtype.is_complex else \
        _so.slice(_FFT_W.real, [0, 0, 0], _ao.shape(z))
    zw = z * w
    return (A("Real", zw, Tout=dtypes.float64) + 2.0 * A("Imag", zw, Tout=dtypes.float64)) \
        if z.dtype.is_complex else zw


def _as_complex(re, im):
    return A("Complex", re, im, Tout=dtypes.complex128)


for _op, _rank in (("FFT", 1), ("IFFT", 1), ("FFT2D", 2), ("IFFT2D", 2), ("FFT3D", 3),
                   ("IFFT3D", 3)):
    add(GradCase((_op,), lambda re, im, _op=_op: _fft_loss(A(_op, _as_complex(re, im))),
                 [u(-1, 1, (2, 3, 4)), u(-1, 1, (2, 3, 4))]))
for _op, _n, _shape in (("RFFT", [6], (2, 3, 5)), ("RFFT", [4], (2, 3, 5)),
                        ("RFFT2D", [4, 5], (2, 3, 6)), ("RFFT3D", [2, 3, 4], (2, 3, 4))):
    add(GradCase((_op,), lambda x, _op=_op, _n=_n: _fft_loss(
        A(_op, x, _n, Treal=dtypes.float64, Tcomplex=dtypes.complex128)),
        [u(-1, 1, _shape)], name=f"n{'x'.join(map(str, _n))}"))
for _op, _n, _shape in (("IRFFT", [6], (2, 3, 4)), ("IRFFT", [5], (2, 3, 3)),
                        ("IRFFT", [4], (2, 3, 4)), ("IRFFT2D", [3, 6], (2, 3, 4)),
                        ("IRFFT3D", [2, 3, 4], (2, 3, 3))):
    add(GradCase((_op,), lambda re, im, _op=_op, _n=_n: _fft_loss(
        A(_op, _as_complex(re, im), _n, Treal=dtypes.float64, Tcomplex=dtypes.complex128)),
        [u(-1, 1, _shape), u(-1, 1, _shape)], name=f"n{'x'.join(map(str, _n))}"))

# == CTCLoss (ops/ctc_ops.py): the loss is smooth in the logits ====================================
_CTC_IDX = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]], np.int64)
_CTC_VALS = np.array([1, 1, 0, 2, 0], np.int32)
add(GradCase(("CTCLoss",), lambda x: A("CTCLoss", x, _CTC_IDX, _CTC_VALS,
                                       np.array([5, 6], np.int32))[0] * [1.0, -0.5],
             [u(-2, 2, (6, 2, 4))]))
