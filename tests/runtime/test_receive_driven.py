"""Receive-driven plans (runtime/receive_driven.py): a partition that receives several tensors
runs each part once its receives arrive, in whatever order they come."""

import threading

import numpy as np
import pytest

from tensorweave import dtypes, errors, ir
from tensorweave.runtime.executor import Executor
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.receive_driven import receive_sets
from tensorweave.runtime.rendezvous import Rendezvous, make_key
from tensorweave.runtime.step import StepContext

DEV = "/job:ps/replica:0/task:0/device:CPU:0"
PEER = "/job:worker/replica:0/task:0/device:CPU:0"
F32 = dtypes.float32


def _recv(name, edge, *controls):
    return ir.NodeDef(name, "_Recv", [f"^{c}" for c in controls], DEV, {
        "tensor_name": edge, "send_device": PEER, "send_device_incarnation": 1,
        "recv_device": DEV, "client_terminated": False, "tensor_type": F32})


def _send(name, src, edge):
    return ir.NodeDef(name, "_Send", [src], DEV, {
        "tensor_name": edge, "send_device": DEV, "send_device_incarnation": 1,
        "recv_device": PEER, "client_terminated": False, "T": F32})


def _key(edge, src=PEER, dst=DEV):
    return make_key(src, 1, dst, edge)


def _ps_partition() -> ir.GraphDef:
    """Receives a then b (in plan order), sends 2·b as soon as b is in, returns a + b."""
    return ir.GraphDef(nodes=[
        _recv("a", "edge_a"),
        _recv("b", "edge_b"),
        ir.NodeDef("two_b", "Add", ["b", "b"], DEV, {"T": F32}),
        _send("two_b/_send", "two_b", "edge_2b"),
        ir.NodeDef("sum", "Add", ["a", "b"], DEV, {"T": F32}),
        ir.NodeDef("out", "_Retval", ["sum"], DEV, {"T": F32, "index": 0}),
    ])


@pytest.mark.parametrize("traced", [False, True])
def test_a_send_that_needs_only_the_second_receive_goes_before_the_first_arrives(traced):
    """The peer sends b, waits for 2·b, and only then sends a: fixed-order code would block on
    a forever."""
    plan = Plan(_ps_partition(), "CPU", device=DEV)
    assert plan.receive_driven and not plan.has_control_flow
    executor = Executor(plan)
    rdv = Rendezvous()
    seen = []

    def peer():
        rdv.send(_key("edge_b"), np.float32(3))
        two_b, _ = rdv.recv(_key("edge_2b", DEV, PEER), deadline=None)
        seen.append(float(two_b))
        rdv.send(_key("edge_a"), np.float32(10))

    thread = threading.Thread(target=peer)
    thread.start()
    ctx = StepContext(1, rdv, timeout_s=10)
    if traced:
        from tensorweave.runtime.stats import StatsCollector

        ctx.stats = StatsCollector(DEV, plan)
    assert float(executor.run([], ctx)[0]) == 13.0
    thread.join(10)
    assert seen == [6.0]


def test_a_receive_behind_a_control_edge_is_not_awaited_before_it():
    """`late` waits for ^first: the step never waits on late's key while first is missing
    (a remote rendezvous would pull late early, reading a ps variable before its update)."""
    g = ir.GraphDef(nodes=[
        _recv("first", "edge_first"),
        _recv("late", "edge_late", "first"),
        ir.NodeDef("sum", "Add", ["first", "late"], DEV, {"T": F32}),
        ir.NodeDef("out", "_Retval", ["sum"], DEV, {"T": F32, "index": 0}),
    ])
    plan = Plan(g, "CPU", device=DEV)
    sets = receive_sets(plan)
    assert sets[plan.by_name["late"]] == 0b11 and sets[plan.by_name["first"]] == 0b01
    awaited = []

    class Watching(Rendezvous):
        def wait_any(self, keys, deadline=None):
            awaited.append(sorted(k.split(";")[3] for k in keys))
            return super().wait_any(keys, deadline)

    rdv = Watching()
    rdv.send(_key("edge_late"), np.float32(2))
    threading.Timer(0.05, rdv.send, [_key("edge_first"), np.float32(1)]).start()
    assert float(Executor(plan).run([], StepContext(2, rdv, timeout_s=10))[0]) == 3.0
    assert awaited[0] == ["edge_first"]


def test_a_receive_that_never_comes_fails_at_the_deadline_naming_it():
    plan = Plan(_ps_partition(), "CPU", device=DEV)
    rdv = Rendezvous()
    rdv.send(_key("edge_b"), np.float32(1))
    with pytest.raises(errors.DeadlineExceededError, match="edge_a"):
        Executor(plan).run([], StepContext(3, rdv, timeout_s=0.2))
