"""The worker service over gRPC: `GrpcWorker` (client) and `WorkerServicer` (server side).

The servicer runs partitions on a task's `LocalWorker` and keeps one rendezvous per step (TF's
RendezvousMgr): `_Send`s of a step deposit there and `RecvTensor(step_id, key)` pulls from it,
streaming raw bytes in chunks (distributed/transfer.py). `CleanupGraph(step_id)` drops a step's
rendezvous; a step that fails aborts it, so remote receivers fail instead of waiting.
"""

from __future__ import annotations

import threading
import time

import grpc
import numpy as np

from tensorweave import errors, ir
from tensorweave.distributed import address as hostport
from tensorweave.distributed import bulk, transfer
from tensorweave.distributed.grpc_master import (
    device_from_proto,
    device_to_proto,
    graph_from_request,
    metadata_from_proto,
    metadata_to_proto,
    shapes_to_proto,
    tensor_proto,
    tensor_value,
)
from tensorweave.distributed.remote import StepTable
from tensorweave.distributed.rpc import (
    CONTROL_DEADLINE_S,
    bulk_handler,
    cancellable_method,
    channel_for,
    client_gone,
    error_from_rpc,
    node_metadata,
    rpc_method,
    run_deadline,
    status_of,
)
from tensorweave.proto import convert
from tensorweave.proto import worker_service_pb2 as pb
from tensorweave.proto import worker_service_pb2_grpc as pb_grpc
from tensorweave.runtime.step import Cancellation, StepContext
from tensorweave.runtime.worker import LocalWorker, WorkerInterface


# -- client ----------------------------------------------------------------------------------
class GrpcWorker(WorkerInterface):
    """`WorkerInterface` over gRPC to the task at `host:port` (or `grpc://host:port`).

    Control calls have `CONTROL_DEADLINE_S`; a step's call its remaining time (from `ctx` or
    `options["timeout_s"]`) plus a grace. Raises the server's `errors.*` class with its message;
    an unreachable task gives UnavailableError naming its address.

    Once GetStatus has named the task's bulk port (distributed/bulk.py; `get_status`, or the
    first `recv_tensor`), tensors are pulled and the per-step calls (RunGraph, CleanupGraph)
    made through it, with the same messages and errors; without one, everything is gRPC.
    Thread-safe.
    """

    def __init__(self, address: str):
        self.address = address.removeprefix("grpc://")
        self._stub = pb_grpc.WorkerServiceStub(channel_for(self.address))
        self._bulk: bulk.BulkClient | None = None
        self._bulk_known = False  # whether GetStatus has told the task's bulk port

    def _call(self, method: str, request, timeout: float):
        try:
            return getattr(self._stub, method)(request, timeout=timeout)
        except grpc.RpcError as e:
            raise error_from_rpc(e, self.address) from None

    def get_status(self, timeout: float = CONTROL_DEADLINE_S) -> list[dict]:
        resp = self._call("GetStatus", pb.GetStatusRequest(), timeout)
        self._learn_bulk_port(resp.bulk_port)
        return [device_from_proto(d) for d in resp.device_attributes]

    def bulk_client(self, timeout: float = CONTROL_DEADLINE_S):
        """The task's `bulk.BulkClient` (None when it has no bulk port, or with TLS), asking
        GetStatus the first time."""
        if not self._bulk_known:
            self.get_status(timeout)
        return self._bulk

    def _learn_bulk_port(self, port: int) -> None:
        use = port > 0 and bulk.client_enabled()
        self._bulk = bulk.client_for(_host_of(self.address), port) if use else None
        self._bulk_known = True

    def register_graph(self, graph_def: ir.GraphDef, device: str,
                       options: dict | None = None) -> str:
        req = pb.RegisterGraphRequest(graph_def=convert.graph_to_proto(graph_def), device=device,
                                      dataflow=bool((options or {}).get("dataflow")))
        shapes_to_proto(graph_def.shapes, req.output_shapes)
        return self._call("RegisterGraph", req, CONTROL_DEADLINE_S).graph_handle

    def _unary(self, method: str, request, timeout: float):
        """`method` over the task's bulk port when it is known to have one, else gRPC."""
        call = _BULK_METHODS.get(method) if self._bulk_known and self._bulk else None
        if call is None:
            return self._call(method, request, timeout)
        try:
            raw = self._bulk.call(call[0], request.SerializeToString(), timeout)
        except bulk.Refused:  # NOTE: it never reached the task: gRPC takes it
            self._bulk_known = False
            return self._call(method, request, timeout)
        except errors.UnavailableError:
            self._bulk_known = False  # NOTE: a restarted task has another port: ask again
            raise
        return call[2].FromString(raw)

    def deregister_graph(self, handle: str) -> None:
        self._call("DeregisterGraph", pb.DeregisterGraphRequest(graph_handle=handle),
                   CONTROL_DEADLINE_S)

    def run_graph(self, handle, step_id, args, options, ctx=None):
        step_s = ctx.remaining() if ctx is not None else options.get("timeout_s")
        req = pb.RunGraphRequest(
            graph_handle=handle, step_id=step_id,
            arg=[tensor_proto(a) for a in args],
            exec_opts=pb.ExecutorOpts(record_timeline=bool(options.get("trace")),
                                      timeout_in_ms=int(step_s * 1000) if step_s else 0))
        if step_s is not None and step_s <= 0:
            raise errors.DeadlineExceededError(None, None, "The step's deadline has passed")
        resp = self._unary("RunGraph", req, run_deadline(step_s))
        values = [tensor_value(t) for t in resp.retval]
        stats = None
        if resp.has_step_stats:
            from tensorweave.proto import config_pb2

            meta = config_pb2.RunMetadata()
            meta.step_stats.CopyFrom(resp.step_stats)
            stats = metadata_from_proto(meta)["step_stats"][0]
        return values, stats

    def cleanup_graph(self, step_id: int) -> None:
        """Drops the step's rendezvous on the task (after every partition of it finished)."""
        self._unary("CleanupGraph", pb.CleanupGraphRequest(step_id=step_id),
                    CONTROL_DEADLINE_S)

    def cleanup_all(self, containers=None) -> None:
        self._call("CleanupAll", pb.CleanupAllRequest(container=list(containers or [])),
                   CONTROL_DEADLINE_S)

    def recv_tensor(self, step_id: int, key: str,
                    timeout_s: float | None = None) -> tuple[object, bool]:
        """(value, is_dead) of rendezvous `key` in step `step_id` on the task; waits for the
        sender up to `timeout_s` (None: the run backstop).

        Pulls over the task's bulk port (distributed/bulk.py) when it has one, learned once
        from GetStatus; else streams over gRPC.
        """
        client = self.bulk_client(CONTROL_DEADLINE_S if timeout_s is None
                                  else min(CONTROL_DEADLINE_S, max(1.0, timeout_s)))
        if client is not None:
            try:
                return client.recv_tensor(step_id, key, timeout_s)
            except bulk.Refused:
                self._bulk_known = False  # NOTE: nothing was taken: stream it over gRPC
            except errors.UnavailableError:
                self._bulk_known = False  # NOTE: a restarted task has another port: ask again
                raise
        req = pb.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        try:
            timeout = run_deadline(None) if timeout_s is None else timeout_s
            return transfer.from_chunks(self._stub.RecvTensor(req, timeout=timeout))
        except grpc.RpcError as e:
            raise error_from_rpc(e, self.address) from None


    def recv_many(self, step_id: int, keys: list[str], deliver,
                  timeout_s: float | None = None) -> None:
        """Pulls several tensors of step `step_id` from the task: `deliver(position, value,
        is_dead)` for each as it arrives. One request over the bulk port when the task has
        one; else one `recv_tensor` after another. Raises as `recv_tensor`."""
        client = self.bulk_client(CONTROL_DEADLINE_S if timeout_s is None
                                  else min(CONTROL_DEADLINE_S, max(1.0, timeout_s)))
        if client is not None:
            try:
                return client.recv_many(step_id, keys, deliver, timeout_s)
            except bulk.Refused:
                self._bulk_known = False  # NOTE: nothing was taken: take them one by one
            except errors.UnavailableError:
                self._bulk_known = False
                raise
        return super().recv_many(step_id, keys, deliver, timeout_s)


def _host_of(address: str) -> str:
    """`host` of `host:port` (IPv6 brackets removed)."""
    try:
        return hostport.split(address)[0] or "127.0.0.1"
    except ValueError:
        return "127.0.0.1"


# -- the per-step worker calls on the bulk port ------------------------------------------------
# gRPC method -> (bulk method id, request class, response class). The master's RunCallable is
# id 1 (grpc_master.RUN_CALLABLE_CALL).
_BULK_METHODS = {
    "RunGraph": (2, pb.RunGraphRequest, pb.RunGraphResponse),
    "CleanupGraph": (3, pb.CleanupGraphRequest, pb.CleanupGraphResponse),
}


def worker_calls(servicer: WorkerServicer) -> dict:
    """The worker methods a server also answers on its bulk port ({method id: handler}):
    the servicer's own gRPC methods, run with an `rpc.BulkContext`."""
    return {ident: bulk_handler(getattr(servicer, method), method, request_cls)
            for method, (ident, request_cls, _) in _BULK_METHODS.items()}


# -- server side -----------------------------------------------------------------------------
_RECV_SLICE_S = 0.5  # a RecvTensor wait rechecks its client and the server this often


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
        self.stopping = Cancellation()  # every RunGraph, when the server stops
        self._running: dict[int, list[Cancellation]] = {}  # step id -> its RunGraphs
        self._lock = threading.Lock()

    bulk_port = 0  # the task's bulk tensor port (distributed/bulk.py), set by its Server

    @rpc_method
    def GetStatus(self, request):
        return pb.GetStatusResponse(
            device_attributes=[device_to_proto(d) for d in self.worker.get_status()],
            bulk_port=self.bulk_port)

    @rpc_method
    def RegisterGraph(self, request):
        handle = self.worker.register_graph(graph_from_request(request), request.device,
                                            {"dataflow": request.dataflow})
        return pb.RegisterGraphResponse(graph_handle=handle)

    @rpc_method
    def DeregisterGraph(self, request):
        self.worker.deregister_graph(request.graph_handle)
        return pb.DeregisterGraphResponse()

    @cancellable_method
    def RunGraph(self, request, cancel):
        """Runs a partition; it ends early (CancelledError, AbortedError) when its client goes
        away, CleanupGraph drops its step, or the server stops."""
        opts = request.exec_opts
        rdv = self.steps.find(request.step_id)
        cancel = Cancellation(cancel, self.stopping)
        ctx = StepContext(request.step_id, rdv, opts.timeout_in_ms / 1000.0 or None,
                          cancellation=cancel)
        args = [convert.tensor_from_proto(t) for t in request.arg]
        with self._lock:
            self._running.setdefault(request.step_id, []).append(cancel)
        try:
            values, stats = self.worker.run_graph(request.graph_handle, request.step_id, args,
                                                  {"trace": opts.record_timeline}, ctx)
        except errors.OpError as e:
            rdv.abort(e)
            raise
        finally:
            self._forget(request.step_id, cancel)
        resp = pb.RunGraphResponse(retval=[convert.tensor_to_proto(np.asarray(v))
                                           for v in values])
        if stats:
            resp.step_stats.CopyFrom(metadata_to_proto({"step_stats": [stats]}).step_stats)
            resp.has_step_stats = True
        return resp

    def _forget(self, step_id: int, cancel: Cancellation) -> None:
        with self._lock:
            runs = self._running.get(step_id, [])
            if cancel in runs:
                runs.remove(cancel)
            if not runs:
                self._running.pop(step_id, None)

    @rpc_method
    def CleanupGraph(self, request):
        with self._lock:
            runs = self._running.pop(request.step_id, [])
        for cancel in runs:  # NOTE: the step failed elsewhere: its partitions here end too
            cancel.cancel(errors.AbortedError(
                None, None, f"Step {request.step_id} was cleaned up (it failed elsewhere)"))
        self.steps.cleanup(request.step_id)
        return pb.CleanupGraphResponse()

    @rpc_method
    def CleanupAll(self, request):
        self.worker.cleanup_all(list(request.container) or None)
        return pb.CleanupAllResponse()

    @_streaming
    def RecvTensor(self, request, context):
        """Streams the step's tensor once it is sent; waits in slices, so a client that went
        away (cancelled, past its deadline) or a server that stops ends the wait."""
        left = context.time_remaining()
        deadline = None if left is None else time.monotonic() + left
        rdv = self.steps.find(request.step_id)
        while True:
            until = time.monotonic() + _RECV_SLICE_S
            try:
                value, dead = rdv.recv(request.rendezvous_key, until if deadline is None
                                       else min(until, deadline))
                break
            except errors.DeadlineExceededError:
                if rdv.error is not None or (deadline is not None and until >= deadline):
                    raise
            if not context.is_active():
                raise client_gone()
            if self.stopping.error is not None:
                raise self.stopping.error
        yield from transfer.to_chunks(value, dead)


def add_worker_service(worker: LocalWorker, server: grpc.Server,
                       steps: StepTable | None = None) -> WorkerServicer:
    """Serves `worker`; `steps` is the task's step table (shared with its master)."""
    servicer = WorkerServicer(worker, steps)
    pb_grpc.add_WorkerServiceServicer_to_server(servicer, server)
    return servicer


__all__ = ["GrpcWorker", "WorkerServicer", "StepTable", "add_worker_service",
           "worker_calls"]
