"""The worker service over gRPC: `GrpcWorker` (client) and `WorkerServicer` (server side).

The servicer runs partitions on a task's `LocalWorker` and keeps one rendezvous per step (TF's
RendezvousMgr): `_Send`s of a step deposit there and `RecvTensor(step_id, key)` pulls from it,
streaming raw bytes in chunks (distributed/transfer.py). `CleanupGraph(step_id)` drops a step's
rendezvous; a step that fails aborts it, so remote receivers fail instead of waiting.
"""

from __future__ import annotations

import time

import grpc
import numpy as np

from tensorweave import errors, ir
from tensorweave.distributed import transfer
from tensorweave.distributed.grpc_master import (
    device_from_proto,
    device_to_proto,
    graph_from_request,
    metadata_from_proto,
    metadata_to_proto,
    shapes_to_proto,
)
from tensorweave.distributed.remote import StepTable
from tensorweave.distributed.rpc import (
    CONTROL_DEADLINE_S,
    channel_for,
    error_from_rpc,
    node_metadata,
    rpc_method,
    run_deadline,
    status_of,
)
from tensorweave.proto import convert
from tensorweave.proto import worker_service_pb2 as pb
from tensorweave.proto import worker_service_pb2_grpc as pb_grpc
from tensorweave.runtime.step import StepContext
from tensorweave.runtime.worker import LocalWorker, WorkerInterface


# -- client ----------------------------------------------------------------------------------
class GrpcWorker(WorkerInterface):
    """`WorkerInterface` over gRPC to the task at `host:port` (or `grpc://host:port`).

    Control calls have `CONTROL_DEADLINE_S`; a step's call its remaining time (from `ctx` or
    `options["timeout_s"]`) plus a grace. Raises the server's `errors.*` class with its message;
    an unreachable task gives UnavailableError naming its address.
    """

    def __init__(self, address: str):
        self.address = address.removeprefix("grpc://")
        self._stub = pb_grpc.WorkerServiceStub(channel_for(self.address))

    def _call(self, method: str, request, timeout: float):
        try:
            return getattr(self._stub, method)(request, timeout=timeout)
        except grpc.RpcError as e:
            raise error_from_rpc(e, self.address) from None

    def get_status(self, timeout: float = CONTROL_DEADLINE_S) -> list[dict]:
        resp = self._call("GetStatus", pb.GetStatusRequest(), timeout)
        return [device_from_proto(d) for d in resp.device_attributes]

    def register_graph(self, graph_def: ir.GraphDef, device: str,
                       options: dict | None = None) -> str:
        req = pb.RegisterGraphRequest(graph_def=convert.graph_to_proto(graph_def), device=device,
                                      dataflow=bool((options or {}).get("dataflow")))
        shapes_to_proto(graph_def.shapes, req.output_shapes)
        return self._call("RegisterGraph", req, CONTROL_DEADLINE_S).graph_handle

    def deregister_graph(self, handle: str) -> None:
        self._call("DeregisterGraph", pb.DeregisterGraphRequest(graph_handle=handle),
                   CONTROL_DEADLINE_S)

    def run_graph(self, handle, step_id, args, options, ctx=None):
        step_s = ctx.remaining() if ctx is not None else options.get("timeout_s")
        req = pb.RunGraphRequest(
            graph_handle=handle, step_id=step_id,
            arg=[convert.tensor_to_proto(np.asarray(a)) for a in args],
            exec_opts=pb.ExecutorOpts(record_timeline=bool(options.get("trace")),
                                      timeout_in_ms=int(step_s * 1000) if step_s else 0))
        if step_s is not None and step_s <= 0:
            raise errors.DeadlineExceededError(None, None, "The step's deadline has passed")
        resp = self._call("RunGraph", req, run_deadline(step_s))
        values = [convert.tensor_from_proto(t) for t in resp.retval]
        stats = None
        if resp.has_step_stats:
            from tensorweave.proto import config_pb2

            meta = config_pb2.RunMetadata()
            meta.step_stats.CopyFrom(resp.step_stats)
            stats = metadata_from_proto(meta)["step_stats"][0]
        return values, stats

    def cleanup_graph(self, step_id: int) -> None:
        """Drops the step's rendezvous on the task (after every partition of it finished)."""
        self._call("CleanupGraph", pb.CleanupGraphRequest(step_id=step_id), CONTROL_DEADLINE_S)

    def cleanup_all(self, containers=None) -> None:
        self._call("CleanupAll", pb.CleanupAllRequest(container=list(containers or [])),
                   CONTROL_DEADLINE_S)

    def recv_tensor(self, step_id: int, key: str,
                    timeout_s: float | None = None) -> tuple[object, bool]:
        """(value, is_dead) of rendezvous `key` in step `step_id` on the task; waits for the
        sender up to `timeout_s` (None: the run backstop)."""
        req = pb.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        try:
            timeout = run_deadline(None) if timeout_s is None else timeout_s
            return transfer.from_chunks(self._stub.RecvTensor(req, timeout=timeout))
        except grpc.RpcError as e:
            raise error_from_rpc(e, self.address) from None


# -- server side -----------------------------------------------------------------------------
def _streaming(fn):
    """Like `rpc_method`, for a method that yields its responses."""

    def wrapped(self, request, context):
        try:
            yield from fn(self, request, context)
        except Exception as e:  # noqa: BLE001 -- every failure must reach the client
            code, details = status_of(e)
            context.set_trailing_metadata(node_metadata(e))
            context.abort(code, details)

    wrapped.__name__ = fn.__name__
    return wrapped


class WorkerServicer(pb_grpc.WorkerServiceServicer):
    """Serves a task's `LocalWorker` as WorkerService."""

    def __init__(self, worker: LocalWorker, steps: StepTable | None = None):
        self.worker = worker
        self.steps = steps if steps is not None else StepTable()

    @rpc_method
    def GetStatus(self, request):
        return pb.GetStatusResponse(
            device_attributes=[device_to_proto(d) for d in self.worker.get_status()])

    @rpc_method
    def RegisterGraph(self, request):
        handle = self.worker.register_graph(graph_from_request(request), request.device,
                                            {"dataflow": request.dataflow})
        return pb.RegisterGraphResponse(graph_handle=handle)

    @rpc_method
    def DeregisterGraph(self, request):
        self.worker.deregister_graph(request.graph_handle)
        return pb.DeregisterGraphResponse()

    @rpc_method
    def RunGraph(self, request):
        opts = request.exec_opts
        rdv = self.steps.find(request.step_id)
        ctx = StepContext(request.step_id, rdv, opts.timeout_in_ms / 1000.0 or None)
        args = [convert.tensor_from_proto(t) for t in request.arg]
        try:
            values, stats = self.worker.run_graph(request.graph_handle, request.step_id, args,
                                                  {"trace": opts.record_timeline}, ctx)
        except errors.OpError as e:
            rdv.abort(e)
            raise
        resp = pb.RunGraphResponse(retval=[convert.tensor_to_proto(np.asarray(v))
                                           for v in values])
        if stats:
            resp.step_stats.CopyFrom(metadata_to_proto({"step_stats": [stats]}).step_stats)
            resp.has_step_stats = True
        return resp

    @rpc_method
    def CleanupGraph(self, request):
        self.steps.cleanup(request.step_id)
        return pb.CleanupGraphResponse()

    @rpc_method
    def CleanupAll(self, request):
        self.worker.cleanup_all(list(request.container) or None)
        return pb.CleanupAllResponse()

    @_streaming
    def RecvTensor(self, request, context):
        left = context.time_remaining()
        deadline = None if left is None else time.monotonic() + left
        value, dead = self.steps.find(request.step_id).recv(request.rendezvous_key, deadline)
        yield from transfer.to_chunks(value, dead)


def add_worker_service(worker: LocalWorker, server: grpc.Server,
                       steps: StepTable | None = None) -> WorkerServicer:
    """Serves `worker`; `steps` is the task's step table (shared with its master)."""
    servicer = WorkerServicer(worker, steps)
    pb_grpc.add_WorkerServiceServicer_to_server(servicer, server)
    return servicer


__all__ = ["GrpcWorker", "WorkerServicer", "StepTable", "add_worker_service"]
