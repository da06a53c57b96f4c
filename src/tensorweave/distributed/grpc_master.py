"""The master service over gRPC: `GrpcMaster` (client) and `MasterServicer` (server side).

Both sides speak `MasterInterface`'s plain data; this module is the only place that turns it
into `master_service.proto` messages and back. Graphs travel as GraphDef, tensors as
TensorProto with raw `tensor_content` (proto/convert.py); nothing is pickled. An `OpError` on
the server becomes the gRPC status of its code with its message, and the client re-raises the
same `errors.*` class with that message (node names included).
"""

from __future__ import annotations

import time

import grpc
import numpy as np

from tensorweave import dtypes, errors, ir
from tensorweave.distributed import bulk_wire
from tensorweave.distributed.rpc import (
    CONNECT_DEADLINE_S,
    CONTROL_DEADLINE_S,
    bulk_handler,
    cancellable_method,
    channel_for,
    error_from_rpc,
    rpc_method,
    run_deadline,
)
from tensorweave.master.master import MasterInterface
from tensorweave.master.options import SessionOptions
from tensorweave.proto import config_pb2, convert, device_attributes_pb2, tensor_pb2
from tensorweave.proto import master_service_pb2 as pb
from tensorweave.proto import master_service_pb2_grpc as pb_grpc


# -- plain data <-> protos -------------------------------------------------------------------
def config_to_proto(config) -> pb.SessionConfig:
    """The wire form of a session's options (SessionOptions, ConfigProto or dict)."""
    o = SessionOptions.from_config(config)
    out = pb.SessionConfig(
        intra_op_parallelism_threads=o.intra_op_threads,
        inter_op_parallelism_threads=o.inter_op_threads,
        allow_soft_placement=o.soft_placement,
        log_device_placement=o.log_placement,
        operation_timeout_in_ms=o.timeout_ms,
        disabled_passes=sorted(o.disabled_passes),
        passes=list(o.passes or ()),
        device_filters=list(o.device_filters),
    )
    out.device_count["CPU"] = o.cpus
    # NOTE: TF's ConfigProto field and message: the master's passes auto-cluster with it
    out.graph_options.optimizer_options.global_jit_level = \
        config_pb2.OptimizerOptions.GlobalJitLevel.Name(o.global_jit_level)
    return out


def config_from_proto(proto: pb.SessionConfig) -> SessionOptions:
    """Raises: InvalidArgumentError for a CPU count out of range."""
    return SessionOptions.from_config({
        "device_count": dict(proto.device_count),
        "intra_op_parallelism_threads": proto.intra_op_parallelism_threads,
        "inter_op_parallelism_threads": proto.inter_op_parallelism_threads,
        "allow_soft_placement": proto.allow_soft_placement,
        "log_device_placement": proto.log_device_placement,
        "operation_timeout_in_ms": proto.operation_timeout_in_ms,
        "disabled_passes": list(proto.disabled_passes),
        "passes": list(proto.passes),
        "device_filters": list(proto.device_filters),
        "global_jit_level": proto.graph_options.optimizer_options.global_jit_level,
    })


def shapes_to_proto(shapes: dict, into) -> None:
    for name, outs in shapes.items():
        entry = into[name]
        for s in outs or []:
            entry.shape.append(convert.shape_to_proto(s))


def shapes_from_proto(field) -> dict[str, list]:
    return {name: [convert.shape_from_proto(s).as_tuple() for s in entry.shape]
            for name, entry in field.items()}


def graph_from_request(request) -> ir.GraphDef:
    graph = convert.graph_from_proto(request.graph_def)
    graph.shapes = shapes_from_proto(request.output_shapes)
    return graph


def options_to_proto(options: dict) -> config_pb2.RunOptions:
    return config_pb2.RunOptions(
        trace_level=config_pb2.RunOptions.FULL_TRACE if options.get("trace") else 0,
        timeout_in_ms=int(options.get("timeout_in_ms") or 0),
        output_partition_graphs=bool(options.get("partition_graphs")),
        inter_op_thread_pool=int(options.get("inter_op_thread_pool") or 0))


def options_from_proto(proto: config_pb2.RunOptions) -> dict:
    return {"trace": proto.trace_level > 0, "timeout_in_ms": proto.timeout_in_ms,
            "partition_graphs": proto.output_partition_graphs,
            "inter_op_thread_pool": proto.inter_op_thread_pool}


def metadata_to_proto(meta: dict) -> config_pb2.RunMetadata:
    from tensorweave.runtime.step_stats import fill_run_metadata

    out = config_pb2.RunMetadata()
    fill_run_metadata(out, meta)
    return out


def metadata_from_proto(proto: config_pb2.RunMetadata) -> dict:
    """The master's metadata dict (what `fill_run_metadata` takes) from a RunMetadata."""
    stats = [{"device": ds.device, "node_stats": [_node_stats(n) for n in ds.node_stats]}
             for ds in proto.step_stats.dev_stats]
    out: dict = {"step_stats": stats}
    if proto.partition_graphs:
        out["partition_graphs"] = [convert.graph_from_proto(g) for g in proto.partition_graphs]
    return out


def _node_stats(n) -> dict:
    outputs = []
    for o in n.output:
        td = o.tensor_description
        try:
            dt = dtypes.as_dtype(td.dtype).np_dtype.str if td.dtype else None
        except (TypeError, ValueError):
            dt = None
        outputs.append({"dtype": dt, "shape": [d.size for d in td.shape.dim],
                        "bytes": td.allocation_description.requested_bytes})
    return {"node_name": n.node_name, "op": n.timeline_label.partition(" = ")[2].split("(")[0],
            "all_start_micros": n.all_start_micros,
            "op_start_rel_micros": n.op_start_rel_micros,
            "op_end_rel_micros": n.op_end_rel_micros,
            "all_end_rel_micros": n.all_end_rel_micros, "output": outputs,
            "timeline_label": n.timeline_label, "thread_id": n.thread_id}


def device_to_proto(d: dict) -> device_attributes_pb2.DeviceAttributes:
    return device_attributes_pb2.DeviceAttributes(
        name=d["name"], device_type=d["device_type"], memory_limit=int(d.get("memory_limit", 0)),
        incarnation=int(d.get("incarnation", 0)))


def device_from_proto(p: device_attributes_pb2.DeviceAttributes) -> dict:
    return {"name": p.name, "device_type": p.device_type, "memory_limit": p.memory_limit,
            "incarnation": p.incarnation}


# NOTE: a step's feeds and fetches are converted on every run; these skip convert's general
# path for numeric arrays (raw `tensor_content` at every size, which convert reads back).
_SHAPES: dict[tuple, object] = {}


def tensor_proto(value) -> tensor_pb2.TensorProto:
    """`convert.tensor_to_proto(value)`, fast for numeric arrays."""
    arr = np.asarray(value)
    enum = bulk_wire.raw_enum(arr.dtype)
    if enum is None or arr.dtype.byteorder == ">":
        return convert.tensor_to_proto(arr)
    shape = _SHAPES.get(arr.shape)
    if shape is None:
        shape = _SHAPES[arr.shape] = convert.shape_to_proto(arr.shape)
    return tensor_pb2.TensorProto(dtype=enum, tensor_shape=shape, tensor_content=arr.tobytes())


def tensor_value(proto: tensor_pb2.TensorProto) -> np.ndarray:
    """`convert.tensor_from_proto(proto)` (a new, writable array), fast for raw content."""
    content = proto.tensor_content
    if content:
        try:
            npd = bulk_wire.wire_dtype(proto.dtype)
        except (TypeError, ValueError):
            npd = None
        dims = [d.size for d in proto.tensor_shape.dim]
        if npd is not None and npd.kind in "biufc" and npd.isnative and min(dims, default=0) >= 0:
            try:
                return np.frombuffer(bytearray(content), npd).reshape(dims)
            except ValueError:
                pass  # NOTE: the wrong byte count: convert says so
    return convert.tensor_from_proto(proto)


# -- client ----------------------------------------------------------------------------------
BULK_RETRY_S = 1.0  # a bulk port that refused a step is not tried again for this long


def _connect_deadline(config) -> float:
    ms = SessionOptions.from_config(config).timeout_ms
    return ms / 1000.0 if ms > 0 else CONNECT_DEADLINE_S


class GrpcMaster(MasterInterface):
    """`MasterInterface` over gRPC to the master at `grpc://host:port`.

    Every call has a deadline: `connect_deadline_s` for session creation (reaching the master),
    `CONTROL_DEADLINE_S` for other control calls, and a step's timeout plus `RUN_GRACE_S` for
    runs. Raises the server's `errors.*` class with its message; an unreachable master gives
    UnavailableError (or DeadlineExceededError) naming the address.
    """

    def __init__(self, target: str, connect_deadline_s: float = CONNECT_DEADLINE_S):
        if not target.startswith("grpc://"):
            raise errors.InvalidArgumentError(None, None, f"Not a grpc target: '{target}'")
        self.target = target
        self.address = target[len("grpc://"):]
        self.connect_deadline_s = connect_deadline_s
        self._stub = pb_grpc.MasterServiceStub(channel_for(self.address))
        self._run = self._stub.RunCallable
        self._run_timeouts: dict[str, float] = {}
        self._fast = None          # the server's BulkClient, which runs steps without gRPC
        self._fast_known = False   # whether the server was asked for its bulk port
        self._fast_retry_at = 0.0  # after a refusal: steps take gRPC until then

    def _call(self, method: str, request, timeout: float):
        try:
            return getattr(self._stub, method)(request, timeout=timeout)
        except grpc.RpcError as e:
            raise error_from_rpc(e, self.address) from None

    def create_session(self, graph_def, config) -> str:
        req = pb.CreateSessionRequest(graph_def=convert.graph_to_proto(graph_def),
                                      config=config_to_proto(config), target=self.target)
        shapes_to_proto(graph_def.shapes, req.output_shapes)
        handle = self._call("CreateSession", req, self.connect_deadline_s).session_handle
        timeout_s = SessionOptions.from_config(config).timeout_s
        if timeout_s:
            self._run_timeouts[handle] = timeout_s
        return handle

    def extend_session(self, handle, graph_def) -> None:
        req = pb.ExtendSessionRequest(session_handle=handle,
                                      graph_def=convert.graph_to_proto(graph_def))
        shapes_to_proto(graph_def.shapes, req.output_shapes)
        self._call("ExtendSession", req, CONTROL_DEADLINE_S)

    def list_devices(self, handle) -> list[dict]:
        resp = self._call("ListDevices", pb.ListDevicesRequest(session_handle=handle),
                          CONTROL_DEADLINE_S)
        return [device_from_proto(d) for d in list(resp.local_device) + list(resp.remote_device)]

    def make_callable(self, handle, feeds, fetches, targets):
        req = pb.MakeCallableRequest(session_handle=handle, feed=feeds, fetch=fetches,
                                     target=targets)
        resp = self._call("MakeCallable", req, CONTROL_DEADLINE_S)
        return int(resp.handle), [dtypes.as_dtype(d) for d in resp.feed_dtype]

    def run_callable(self, handle, callable_id, feed_values, options=None):
        """Runs a step over the server's bulk port when it has one (learned once, from
        GetStatus), else over gRPC; the same request and response messages either way."""
        req = pb.RunCallableRequest(session_handle=handle, handle=callable_id,
                                    feed=[tensor_proto(v) for v in feed_values])
        step_s = self._run_timeouts.get(handle)
        if options is not None:
            req.options.CopyFrom(options_to_proto(options))
            req.has_options = True
            if options.get("timeout_in_ms"):
                step_s = options["timeout_in_ms"] / 1000.0
        fast = self._fast if self._fast_known else self._learn_fast()
        resp = self._run_fast(fast, req, run_deadline(step_s)) if fast is not None else None
        if resp is None:
            try:
                resp = self._run(req, timeout=run_deadline(step_s))
            except grpc.RpcError as e:
                raise error_from_rpc(e, self.address) from None
        values = [tensor_value(t) for t in resp.fetch]
        return values, (metadata_from_proto(resp.metadata) if resp.has_metadata else None)

    def _run_fast(self, fast, req, timeout: float) -> pb.RunCallableResponse | None:
        """The step over the bulk port; None when the port refused it (it never reached the
        server: the caller runs it over gRPC, and the port is asked again after
        `BULK_RETRY_S`)."""
        from tensorweave.distributed import bulk

        if time.monotonic() < self._fast_retry_at:
            return None
        try:
            raw = fast.call(RUN_CALLABLE_CALL, req.SerializeToString(), timeout)
        except bulk.Refused:
            self._fast_known = False
            self._fast_retry_at = time.monotonic() + BULK_RETRY_S
            return None
        except errors.UnavailableError:
            self._fast_known = False  # NOTE: a restarted server has another port: ask again
            raise
        return pb.RunCallableResponse.FromString(raw)

    def _learn_fast(self):
        """The server's BulkClient, or None (no bulk port, TLS, or no worker service)."""
        from tensorweave.distributed import bulk
        from tensorweave.distributed.grpc_worker import GrpcWorker

        self._fast = None
        if time.monotonic() < self._fast_retry_at:
            return None
        if bulk.client_enabled():
            try:
                self._fast = GrpcWorker(self.address).bulk_client(self.connect_deadline_s)
            except (errors.UnavailableError, errors.DeadlineExceededError):
                return None  # NOTE: no answer: this step takes gRPC; ask again next time
            except errors.OpError:
                pass  # no worker service there: steps go over gRPC
        self._fast_known = True
        return self._fast

    def release_callable(self, handle, callable_id) -> None:
        self._call("ReleaseCallable",
                   pb.ReleaseCallableRequest(session_handle=handle, handle=callable_id),
                   CONTROL_DEADLINE_S)

    def close_session(self, handle) -> None:
        self._run_timeouts.pop(handle, None)
        self._call("CloseSession", pb.CloseSessionRequest(session_handle=handle),
                   CONTROL_DEADLINE_S)

    def reset(self, containers=None) -> None:
        self._call("Reset", pb.ResetRequest(container=list(containers or [])),
                   self.connect_deadline_s)


def connect(target: str, config=None) -> GrpcMaster:
    """The master at `target` ("grpc://host:port"); `config` (ConfigProto or dict) may set
    `operation_timeout_in_ms`, the deadline for reaching it."""
    return GrpcMaster(target, _connect_deadline(config))


# -- server side -----------------------------------------------------------------------------
class MasterServicer(pb_grpc.MasterServiceServicer):
    """Serves a `MasterInterface` (a server's LocalMaster) as MasterService."""

    def __init__(self, master: MasterInterface):
        self.master = master

    @rpc_method
    def CreateSession(self, request):
        handle = self.master.create_session(graph_from_request(request),
                                            config_from_proto(request.config))
        return pb.CreateSessionResponse(session_handle=handle)

    @rpc_method
    def ExtendSession(self, request):
        self.master.extend_session(request.session_handle, graph_from_request(request))
        return pb.ExtendSessionResponse()

    @rpc_method
    def ListDevices(self, request):
        devs = self.master.list_devices(request.session_handle)
        return pb.ListDevicesResponse(local_device=[device_to_proto(d) for d in devs])

    @rpc_method
    def MakeCallable(self, request):
        cid, feed_dtypes = self.master.make_callable(
            request.session_handle, list(request.feed), list(request.fetch),
            list(request.target))
        return pb.MakeCallableResponse(
            handle=cid, feed_dtype=[dtypes.as_dtype(d).as_datatype_enum for d in feed_dtypes])

    @cancellable_method
    def RunCallable(self, request: pb.RunCallableRequest, cancel) -> pb.RunCallableResponse:
        """One step (also served on the bulk port); it ends with CancelledError when its
        client goes away or its session closes. Raises OpError."""
        feeds = [tensor_value(t) for t in request.feed]
        options = options_from_proto(request.options) if request.has_options else {}
        options["cancellation"] = cancel
        values, meta = self.master.run_callable(request.session_handle, request.handle,
                                                feeds, options)
        resp = pb.RunCallableResponse(fetch=[tensor_proto(v) for v in values])
        if meta:
            resp.metadata.CopyFrom(metadata_to_proto(meta))
            resp.has_metadata = True
        return resp

    @rpc_method
    def ReleaseCallable(self, request):
        self.master.release_callable(request.session_handle, request.handle)
        return pb.ReleaseCallableResponse()

    @rpc_method
    def CloseSession(self, request):
        self.master.close_session(request.session_handle)
        return pb.CloseSessionResponse()

    @rpc_method
    def Reset(self, request):
        self.master.reset(list(request.container) or None)
        return pb.ResetResponse()


# The bulk transport's method id of RunCallable (distributed/bulk.py).
RUN_CALLABLE_CALL = 1


def master_calls(master: MasterInterface) -> dict:
    """The master methods a server also answers on its bulk port: {method id: handler}."""
    servicer = MasterServicer(master)
    return {RUN_CALLABLE_CALL: bulk_handler(servicer.RunCallable, "RunCallable",
                                            pb.RunCallableRequest)}


def add_master_service(master: MasterInterface, server: grpc.Server) -> MasterServicer:
    servicer = MasterServicer(master)
    pb_grpc.add_MasterServiceServicer_to_server(servicer, server)
    return servicer


__all__ = ["GrpcMaster", "MasterServicer", "connect", "add_master_service", "master_calls",
           "tensor_proto", "tensor_value"]
