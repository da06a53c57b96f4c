"""Op traits live on the OpDef, and every layer reads them there: a new op that declares its
traits when it registers gets the behaviour of its kind without being added to any list."""

from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave import ir
from tensorweave.master.place import Placement, place
from tensorweave.ops.registry import OPS, op_traits, register_op
from tensorweave.ops.traits import GEMM, POOL, OpTraits
from tensorweave.runtime.executor import _parallel_waves
from tensorweave.runtime.kernels.cpu import parallel
from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.resources import ResourceMgr

register_op("TestTraitsGemm", inputs=["a: float", "b: float"], outputs=["c: float"],
            traits=OpTraits(expensive=True, compute_class=GEMM))
register_op("TestTraitsShape", inputs=["x: float"], outputs=["s: int32"],
            traits=OpTraits(metadata_only=True))


@register_kernel("TestTraitsGemm")
def _gemm(node):
    return lambda a, b: a @ b


@register_kernel("TestTraitsShape")
def _shape(node):
    return lambda x: np.asarray(np.shape(x), np.int32)


def test_builtin_ops_carry_their_traits():
    assert OPS.lookup("Switch").traits.control_flow
    assert OPS.lookup("VariableV2").traits.variable and op_traits("VariableV2").persistent
    assert op_traits("Const").persistent and not op_traits("Const").variable
    assert op_traits("MatMul").compute_class == GEMM and op_traits("MatMul").expensive
    assert op_traits("Conv2D").compute_class == POOL
    assert op_traits("Shape").metadata_only
    assert OPS.lookup("RandomUniform").is_stateful
    assert not op_traits("Add").expensive and not op_traits("NotAnOp").control_flow


def test_a_new_op_gets_the_thread_policy_and_waves_of_its_traits():
    nodes = [ir.NodeDef("a", "_Arg", [], "", {"T": tf.float32, "index": 0}),
             ir.NodeDef("m1", "TestTraitsGemm", ["a", "a"]),
             ir.NodeDef("m2", "TestTraitsGemm", ["a", "a"]),
             ir.NodeDef("r1", "_Retval", ["m1"], "", {"T": tf.float32, "index": 0}),
             ir.NodeDef("r2", "_Retval", ["m2"], "", {"T": tf.float32, "index": 1})]
    plan = Plan(ir.GraphDef(nodes=nodes), "CPU", ResourceMgr(), "/device:CPU:0")
    assert parallel.plan_wants_pool(it.op_def.traits.compute_class for it in plan.items) is True
    waves = _parallel_waves(plan)
    assert waves is not None and sorted(i.name for w in waves.values() for i in w) == ["m1",
                                                                                       "m2"]


def test_a_new_metadata_op_is_placed_with_its_input():
    devs = ["/job:localhost/replica:0/task:0/device:CPU:0",
            "/job:localhost/replica:0/task:0/device:CPU:1"]
    nodes = {"x": ir.NodeDef("x", "Const", [], devs[1],
                             {"dtype": tf.float32, "value": np.float32(1.0)}),
             "s": ir.NodeDef("s", "TestTraitsShape", ["x"])}
    where = place(nodes, ["x", "s"], devs, Placement())
    assert where.devices["s"] == where.devices["x"] == devs[1]
