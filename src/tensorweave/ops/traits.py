"""Op traits: the properties of an op type that several layers act on.

Every `OpDef` carries an `OpTraits` (`op_def.traits`, read through `op_traits(op_type)`):
the master's passes and placer, the runtime's planner and executor, the kernels' thread
policy and the saver all read these, never a list of op names of their own. A new op
declares its traits when it registers (`register_op(..., traits=OpTraits(...))`); the
built-in op types take theirs from `BUILTIN` below, the one table of them.
"""

from __future__ import annotations

from dataclasses import dataclass

POOL = "pool"   # convolution-like: its step runs with the kernels' own thread pool
GEMM = "gemm"   # a dense matrix product: its step lets BLAS thread


@dataclass(frozen=True)
class OpTraits:
    """What the runtime needs to know about an op type beyond its signature."""

    control_flow: bool = False   # Switch/Merge/Enter/Exit/NextIteration/LoopCond family
    variable: bool = False       # creates a variable (its buffer or handle)
    persistent: bool = False     # its output outlives the step (constants, variables)
    expensive: bool = False      # releases the GIL and runs long: worth a thread hop
    compute_class: str = ""      # POOL, GEMM or "" (the step's kernel-thread policy)
    metadata_only: bool = False  # reads only its input's shape (Shape, Size, Rank)


NONE = OpTraits()

_CONTROL_FLOW = OpTraits(control_flow=True)
_VARIABLE = OpTraits(variable=True, persistent=True)
_GEMM = OpTraits(expensive=True, compute_class=GEMM)
_POOL = OpTraits(expensive=True, compute_class=POOL)
_EXPENSIVE = OpTraits(expensive=True)
_METADATA = OpTraits(metadata_only=True)


def _table(traits: OpTraits, names: str) -> dict[str, OpTraits]:
    return {n: traits for n in names.split()}


BUILTIN: dict[str, OpTraits] = {
    **_table(_CONTROL_FLOW, "Switch RefSwitch Merge RefMerge Enter RefEnter Exit RefExit "
                            "NextIteration RefNextIteration LoopCond ControlTrigger"),
    **_table(_VARIABLE, "Variable VariableV2 AutoReloadVariable VarHandleOp"),
    "Const": OpTraits(persistent=True),
    **_table(_GEMM, "MatMul _FusedMatMul BatchMatMul BatchMatMulV2"),
    **_table(_POOL, "Conv2D _FusedConv2D Conv2DBackpropInput Conv2DBackpropFilter"),
    **_table(_EXPENSIVE, "DepthwiseConv2dNative MaxPool AvgPool MaxPoolGrad AvgPoolGrad "
                         "FusedBatchNormV3 FusedBatchNormGradV3 XlaLaunch"),
    **_table(_METADATA, "Shape ShapeN Size Rank"),
}


def builtin_traits(op_type: str) -> OpTraits:
    """The traits a built-in op type registers with (NONE for the others)."""
    return BUILTIN.get(op_type, NONE)


__all__ = ["BUILTIN", "GEMM", "NONE", "OpTraits", "POOL", "builtin_traits"]
