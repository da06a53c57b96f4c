"""A few hundred malformed requests against ONE real server process (seeded, reproducible).

Every request goes through a raw generic gRPC call (bytes in, bytes out), so nothing on the
client side cleans it up first. Each must end with a clear status (INVALID_ARGUMENT, NOT_FOUND,
ABORTED, ...), never OK for a request that is wrong, never UNKNOWN/INTERNAL crash garbage; and
after all of them the server still runs a real `Session.run` correctly.
"""

from __future__ import annotations

import random

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import security
from tensorweave.distributed.rpc import CHANNEL_OPTIONS
from tensorweave.proto import attr_value_pb2, graph_pb2, types_pb2
from tensorweave.proto import master_service_pb2 as mpb
from tensorweave.proto import worker_service_pb2 as wpb
from tensorweave.proto.convert import tensor_to_proto
from tensorweave.runtime.rendezvous import make_key
from tests.distributed.servers import server_process

pytestmark = [pytest.mark.slow, pytest.mark.multiprocess]

SEED = 20261130
MASTER, WORKER = "/tensorweave.MasterService/", "/tensorweave.WorkerService/"
DEV = "/job:localhost/replica:0/task:0/device:CPU:0"
CRASH = frozenset([grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL])
OK = grpc.StatusCode.OK
F32, I32 = types_pb2.DT_FLOAT, types_pb2.DT_INT32


class Raw:
    """Generic unary calls to one server: (status code, details, response bytes or None)."""

    def __init__(self, target: str):
        self.channel = grpc.insecure_channel(target.removeprefix("grpc://"),
                                             options=CHANNEL_OPTIONS)

    def __call__(self, method: str, payload, timeout: float = 10.0):
        if not isinstance(payload, bytes):
            payload = payload.SerializeToString()
        try:
            if method.endswith("RecvTensor"):
                call = self.channel.unary_stream(method)
                return OK, "", b"".join(call(payload, timeout=timeout))
            return OK, "", self.channel.unary_unary(method)(payload, timeout=timeout)
        except grpc.RpcError as e:
            return e.code(), e.details() or "", None


# -- GraphDefs that are wrong in one way each --------------------------------------------------
def _node(g, name, op, inputs=(), **attrs):
    n = g.node.add(name=name, op=op, input=list(inputs))
    for key, value in attrs.items():
        n.attr[key].CopyFrom(value)
    return n


def _type(t):
    return attr_value_pb2.AttrValue(type=t)


def _tensor(proto):
    return attr_value_pb2.AttrValue(tensor=proto)


def _const(g, name, value, dtype=F32):
    return _node(g, name, "Const", dtype=_type(dtype), value=_tensor(tensor_to_proto(value)))


def _huge_const(dims):
    t = tensor_to_proto(np.zeros(0, np.float32))
    del t.tensor_shape.dim[:]
    for d in dims:
        t.tensor_shape.dim.add(size=d)
    return t


# NOTE: graphs the server may accept, and why: the worker runs a partition on the device its
# request names (node devices are the master's business) and fetches nothing; and nothing
# checks input dtypes against an op's signature yet (numpy promotes; reported to the lead).
MAY_SUCCEED = {"a device that does not exist": ("worker",),
               "fetching a node that is not there": ("worker",),
               "an int32 Const feeding a float add": ("session", "worker")}


# NOTE: x's shape is unknown, so a matrix is a fine feed; extra feeds are ignored (the master
# and worker do not count them yet: reported to the lead).
FEEDS_MAY_SUCCEED = frozenset(["a matrix feed", "two feeds for one"])


def bad_graphs():
    """(label, GraphDef, the node to fetch) for graphs that must fail somewhere."""
    out = []

    def graph(label, fetch="y"):
        g = graph_pb2.GraphDef()
        out.append((label, g, fetch))
        return g

    g = graph("unknown op")
    _node(g, "y", "NoSuchOpAnywhere")
    g = graph("string where the type attr belongs")
    _node(g, "y", "Const", dtype=attr_value_pb2.AttrValue(s=b"float"),
          value=_tensor(tensor_to_proto(np.float32(1))))
    g = graph("unknown DataType enum")
    _node(g, "y", "Const", dtype=_type(999), value=_tensor(tensor_to_proto(np.float32(1))))
    g = graph("unknown dtype inside a tensor")
    t = tensor_to_proto(np.float32(1))
    t.dtype = 777
    _node(g, "y", "Const", dtype=_type(F32), value=_tensor(t))
    for dims in ([1 << 40], [1 << 62, 1 << 62], [1 << 31, 1 << 31, 1 << 31], [-5, 3]):
        g = graph(f"Const of shape {dims}")
        _node(g, "y", "Const", dtype=_type(F32), value=_tensor(_huge_const(dims)))
    g = graph("tensor_content of the wrong length")
    t = tensor_to_proto(np.ones(4, np.float32))
    t.tensor_content = t.tensor_content[:-3]
    _node(g, "y", "Const", dtype=_type(F32), value=_tensor(t))
    g = graph("Const without its value")
    _node(g, "y", "Const", dtype=_type(F32))
    g = graph("an int32 Const feeding a float add")
    _const(g, "a", np.float32(1))
    _const(g, "b", np.int32(2), I32)
    _node(g, "y", "AddV2", ["a", "b"], T=_type(F32))
    g = graph("type attr outside the allowed set")
    _const(g, "a", np.array([True, False]), types_pb2.DT_BOOL)
    _node(g, "y", "MatMul", ["a", "a"], T=_type(types_pb2.DT_BOOL))
    g = graph("a cycle")
    _node(g, "x", "Identity", ["y"], T=_type(F32))
    _node(g, "y", "Identity", ["x"], T=_type(F32))
    g = graph("a self loop")
    _node(g, "y", "Identity", ["y"], T=_type(F32))
    g = graph("duplicate node names")
    _const(g, "y", np.float32(1))
    _const(g, "y", np.float32(2))
    g = graph("a missing input")
    _node(g, "y", "Identity", ["nowhere"], T=_type(F32))
    for bad in ("a:abc", "a:99", "a:-1", "", "^", "a:"):
        g = graph(f"input spelled {bad!r}")
        _const(g, "a", np.float32(1))
        _node(g, "y", "Identity", [bad], T=_type(F32))
    g = graph("too few inputs")
    _const(g, "a", np.float32(1))
    _node(g, "y", "AddV2", ["a"], T=_type(F32))
    g = graph("too many inputs")
    _const(g, "a", np.float32(1))
    _node(g, "y", "AddV2", ["a", "a", "a"], T=_type(F32))
    g = graph("N far larger than the inputs")
    _const(g, "a", np.float32(1))
    _const(g, "axis", np.int32(0), I32)
    _node(g, "y", "ConcatV2", ["a", "a", "axis"], T=_type(F32),
          N=attr_value_pb2.AttrValue(i=10**9), Tidx=_type(I32))
    g = graph("N below its minimum")
    _node(g, "y", "AddN", [], T=_type(F32), N=attr_value_pb2.AttrValue(i=-3))
    g = graph("a list attr of the wrong kind")
    _const(g, "a", np.ones((1, 2), np.float32))
    _node(g, "y", "Squeeze", ["a"], T=_type(F32), squeeze_dims=attr_value_pb2.AttrValue(
        list=attr_value_pb2.AttrValue.ListValue(s=[b"0"])))
    g = graph("a string attr outside its allowed values")
    _const(g, "a", np.ones((1, 4, 4, 1), np.float32))
    _node(g, "y", "MaxPool", ["a"], T=_type(F32), padding=attr_value_pb2.AttrValue(s=b"HUGE"),
          ksize=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(i=[1] * 4)),
          strides=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(i=[1] * 4)))
    g = graph("a function placeholder for an int attr")
    _node(g, "y", "_Arg", T=_type(F32), index=attr_value_pb2.AttrValue(placeholder="i"))
    g = graph("a string index injected into _Arg")
    _node(g, "y", "_Arg", T=_type(F32),
          index=attr_value_pb2.AttrValue(s=b"0]; __import__('os')._exit(3); v=args[0"))
    g = graph("a PyFunc")
    _const(g, "a", np.float32(1))
    _node(g, "y", "PyFunc", ["a"], token=attr_value_pb2.AttrValue(s=b"pyfunc_0"),
          Tin=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(type=[F32])),
          Tout=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(type=[F32])))
    g = graph("a PyFunc inside a library function")
    f = g.library.function.add()
    f.signature.name = "sneaky"
    f.node_def.add(name="p", op="EagerPyFunc")
    _const(g, "y", np.float32(1))
    g = graph("a reshape to a negative size")
    _const(g, "a", np.ones(6, np.float32))
    _const(g, "s", np.array([-2, -3], np.int32), I32)
    _node(g, "y", "Reshape", ["a", "s"], T=_type(F32), Tshape=_type(I32))
    g = graph("fill to an impossible size")
    _const(g, "d", np.array([1 << 40, 1 << 40], np.int64), types_pb2.DT_INT64)
    _const(g, "v", np.float32(0))
    _node(g, "y", "Fill", ["d", "v"], T=_type(F32), index_type=_type(types_pb2.DT_INT64))
    g = graph("a device that does not exist")
    _const(g, "y", np.float32(1)).device = "/job:nowhere/task:9/device:TPU:7"
    g = graph("fetching a node that is not there", fetch="absent")
    _const(g, "y", np.float32(1))
    return out


# -- the flows ----------------------------------------------------------------------------------
def session_flow(raw: Raw, graph, fetch: str, feeds=()):
    """CreateSession → MakeCallable → RunCallable → CloseSession; the first failure (or OK)."""
    code, why, resp = raw(MASTER + "CreateSession", mpb.CreateSessionRequest(graph_def=graph))
    if code != OK:
        return code, why
    handle = mpb.CreateSessionResponse.FromString(resp).session_handle
    try:
        code, why, resp = raw(MASTER + "MakeCallable", mpb.MakeCallableRequest(
            session_handle=handle, feed=list(feeds), fetch=[fetch]))
        if code != OK:
            return code, why
        cid = mpb.MakeCallableResponse.FromString(resp).handle
        code, why, _ = raw(MASTER + "RunCallable",
                           mpb.RunCallableRequest(session_handle=handle, handle=cid))
        return code, why
    finally:
        raw(MASTER + "CloseSession", mpb.CloseSessionRequest(session_handle=handle))


def worker_flow(raw: Raw, graph, args=()):
    """RegisterGraph → RunGraph → DeregisterGraph; the first failure (or OK)."""
    code, why, resp = raw(WORKER + "RegisterGraph",
                          wpb.RegisterGraphRequest(graph_def=graph, device=DEV))
    if code != OK:
        return code, why
    handle = wpb.RegisterGraphResponse.FromString(resp).graph_handle
    try:
        code, why, _ = raw(WORKER + "RunGraph", wpb.RunGraphRequest(
            graph_handle=handle, step_id=7, arg=list(args)))
        return code, why
    finally:
        raw(WORKER + "DeregisterGraph", wpb.DeregisterGraphRequest(graph_handle=handle))


def _good_graph():
    """x: float32[None] placeholder, y = x * 2 (fetch "y", feed "x")."""
    g = graph_pb2.GraphDef()
    _node(g, "x", "Placeholder", dtype=_type(F32))
    _const(g, "two", np.float32(2))
    _node(g, "y", "Mul", ["x", "two"], T=_type(F32))
    return g


def _partition():
    """A worker partition: retval 0 = arg 0 * 2 (float32)."""
    g = graph_pb2.GraphDef()
    _node(g, "a", "_Arg", T=_type(F32), index=attr_value_pb2.AttrValue(i=0))
    _const(g, "two", np.float32(2))
    _node(g, "m", "Mul", ["a", "two"], T=_type(F32))
    _node(g, "r", "_Retval", ["m"], T=_type(F32), index=attr_value_pb2.AttrValue(i=0))
    return g


def garbage(rng: random.Random, valid: bytes) -> bytes:
    """Random bytes, or `valid` truncated, or `valid` with a few bytes flipped."""
    kind = rng.randrange(3)
    if kind == 0 or not valid:
        return rng.randbytes(rng.randrange(1, 300))
    if kind == 1:
        return valid[:rng.randrange(len(valid))]
    out = bytearray(valid)
    for _ in range(rng.randrange(1, 4)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def bad_tensors():
    """TensorProtos that must not decode."""
    out = []
    t = tensor_to_proto(np.ones(3, np.float32))
    t.tensor_content = t.tensor_content[:5]
    out.append(t)
    t = tensor_to_proto(np.float32(1))
    t.dtype = 555
    out.append(t)
    out.append(_huge_const([1 << 62, 8]))
    t = tensor_to_proto(np.ones(2, np.float32))
    t.tensor_shape.dim[0].size = -1
    out.append(t)
    t = tensor_to_proto(np.float32(1))
    t.float_val.extend([1.0] * 10)
    out.append(t)
    return out


# -- the test -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def target():
    """A server process; at the end it must still run, then stop cleanly (exit 0) with no
    traceback on its stderr."""
    with pytest.MonkeyPatch.context() as mp:  # NOTE: a plain server for raw plain calls
        for var in security.SecurityConfig().environment():
            mp.delenv(var, raising=False)
        with server_process("--port", "0") as (proc, tgt):
            yield tgt
            assert proc.poll() is None, "the server process died"
            proc.terminate()
            _, err = proc.communicate(timeout=10)
            assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]


def _check(results: list, label: str, code, why: str, may_succeed: bool = False) -> None:
    results.append((label, code, why))
    assert code not in CRASH, f"{label}: {code.name} {why!r}"
    assert may_succeed or code != OK, f"{label}: the server accepted it"


def test_malformed_requests_get_clear_errors_and_the_server_keeps_serving(target):
    rng = random.Random(SEED)
    raw = Raw(target)
    results: list = []
    good = mpb.CreateSessionRequest(graph_def=_good_graph()).SerializeToString()

    # a live session, callable and graph for the stale/unknown-handle cases
    code, _, resp = raw(MASTER + "CreateSession", good)
    assert code == OK
    sess = mpb.CreateSessionResponse.FromString(resp).session_handle
    code, _, resp = raw(MASTER + "MakeCallable", mpb.MakeCallableRequest(
        session_handle=sess, feed=["x"], fetch=["y"]))
    assert code == OK
    cid = mpb.MakeCallableResponse.FromString(resp).handle
    code, _, resp = raw(WORKER + "RegisterGraph",
                        wpb.RegisterGraphRequest(graph_def=_partition(), device=DEV))
    assert code == OK
    ghandle = wpb.RegisterGraphResponse.FromString(resp).graph_handle

    # 1. bytes that are not the request (random, truncated, flipped): any method
    valid = {
        MASTER + "CreateSession": good,
        MASTER + "ExtendSession": mpb.ExtendSessionRequest(
            session_handle=sess, graph_def=_good_graph()).SerializeToString(),
        MASTER + "MakeCallable": mpb.MakeCallableRequest(
            session_handle=sess, feed=["x"], fetch=["y"]).SerializeToString(),
        MASTER + "RunCallable": mpb.RunCallableRequest(
            session_handle=sess, handle=cid,
            feed=[tensor_to_proto(np.ones(3, np.float32))]).SerializeToString(),
        WORKER + "RegisterGraph": wpb.RegisterGraphRequest(
            graph_def=_partition(), device=DEV).SerializeToString(),
        WORKER + "RunGraph": wpb.RunGraphRequest(
            graph_handle=ghandle, step_id=3,
            arg=[tensor_to_proto(np.ones(2, np.float32))]).SerializeToString(),
        WORKER + "RecvTensor": wpb.RecvTensorRequest(
            step_id=5, rendezvous_key=make_key(DEV, 1, DEV, "edge_1_y")).SerializeToString(),
    }
    for i in range(240):
        method = rng.choice(sorted(valid))
        payload = garbage(rng, valid[method])
        code, why, _ = raw(method, payload, timeout=0.5 if "Recv" in method else 10.0)
        # NOTE: some garbage still parses (and some of it is even a valid request); it must
        # then be served or refused cleanly. A RecvTensor that parses waits for its sender.
        _check(results, f"garbage #{i} to {method}", code, why, may_succeed=True)

    # 2. GraphDefs wrong in one way each, through the master and through the worker
    for label, graph, fetch in bad_graphs():
        accepted = MAY_SUCCEED.get(label, ())
        _check(results, f"session: {label}", *session_flow(raw, graph, fetch),
               may_succeed="session" in accepted)
        _check(results, f"worker: {label}", *worker_flow(raw, graph),
               may_succeed="worker" in accepted)

    # 3. stale and unknown handles
    for handle in ("s999999", "", "s1/../s2", "\u2603" * 40):
        for method, req in (
                ("ExtendSession", mpb.ExtendSessionRequest(session_handle=handle)),
                ("ListDevices", mpb.ListDevicesRequest(session_handle=handle)),
                ("MakeCallable", mpb.MakeCallableRequest(session_handle=handle, fetch=["y"])),
                ("RunCallable", mpb.RunCallableRequest(session_handle=handle, handle=cid)),
                ("ReleaseCallable", mpb.ReleaseCallableRequest(session_handle=handle))):
            _check(results, f"{method} of session {handle!r}", *raw(MASTER + method, req)[:2])
        _check(results, f"RunGraph of graph {handle!r}", *raw(WORKER + "RunGraph",
               wpb.RunGraphRequest(graph_handle=handle, step_id=1))[:2])
    for bad_cid in (0, -1, 999, 1 << 62):
        _check(results, f"RunCallable of callable {bad_cid}", *raw(MASTER + "RunCallable",
               mpb.RunCallableRequest(session_handle=sess, handle=bad_cid))[:2])
    for fetch in (["nope"], ["y:7"], ["y:-1"], [""], []):
        _check(results, f"MakeCallable fetching {fetch}", *raw(MASTER + "MakeCallable",
               mpb.MakeCallableRequest(session_handle=sess, feed=["x"], fetch=fetch,
                                       target=[] if fetch else ["nope"]))[:2])
    _check(results, "MakeCallable feeding an unknown tensor", *raw(MASTER + "MakeCallable",
           mpb.MakeCallableRequest(session_handle=sess, feed=["ghost:0"], fetch=["y"]))[:2])

    # 4. wrong feeds and args: counts, dtypes, undecodable tensors
    f32 = tensor_to_proto(np.ones(3, np.float32))
    feeds_cases = [("no feeds", []), ("two feeds for one", [f32, f32]),
                   ("a string feed", [tensor_to_proto(np.array([b"a"], object), tf.string)]),
                   ("a matrix feed", [tensor_to_proto(np.ones((2, 2), np.float32))])]
    feeds_cases += [(f"bad tensor #{i}", [t]) for i, t in enumerate(bad_tensors())]
    for label, feeds in feeds_cases:
        code, why, _ = raw(MASTER + "RunCallable",
                           mpb.RunCallableRequest(session_handle=sess, handle=cid, feed=feeds))
        _check(results, f"RunCallable with {label}", code, why,
               may_succeed=label in FEEDS_MAY_SUCCEED)
        code, why, _ = raw(WORKER + "RunGraph",
                           wpb.RunGraphRequest(graph_handle=ghandle, step_id=11, arg=feeds))
        _check(results, f"RunGraph with {label}", code, why,
               may_succeed=label in FEEDS_MAY_SUCCEED)
    _check(results, "RegisterGraph on an unknown device", *raw(WORKER + "RegisterGraph",
           wpb.RegisterGraphRequest(graph_def=_partition(), device="/job:x/task:0/cpu:9"))[:2])

    # 5. RecvTensor with keys that are not keys, and for steps that never send
    for key in ("", "no-separators", ";;;;", "a;b;c;d;e;f;g", "\x00" * 20):
        code, why, _ = raw(WORKER + "RecvTensor",
                           wpb.RecvTensorRequest(step_id=rng.randrange(1 << 40),
                                                 rendezvous_key=key), timeout=0.3)
        _check(results, f"RecvTensor of key {key!r}", code, why)

    # the server is alive and right
    assert len(results) >= 300
    assert raw(MASTER + "CloseSession", mpb.CloseSessionRequest(session_handle=sess))[0] == OK
    with tf.Graph().as_default(), tf.Session(target) as s:
        a = tf.placeholder(tf.float32, [3], name="a")
        np.testing.assert_array_equal(s.run(a * 3.0, {a: [1.0, 2.0, 3.0]}), [3.0, 6.0, 9.0])


def main():  # pragma: no cover - prints every status, for looking at them
    with server_process("--port", "0") as (_, tgt):
        raw = Raw(tgt)
        for label, graph, fetch in bad_graphs():
            print(f"{label:45s} session: {session_flow(raw, graph, fetch)}")
            print(f"{'':45s} worker:  {worker_flow(raw, graph)}")


if __name__ == "__main__":  # pragma: no cover
    main()
