"""`Server`: one task of a cluster serving the master and worker services over gRPC
(`tf.train.Server`).

The server owns ONE in-process worker for its task's devices, shared by every session its
master creates, so variables and other resources on the server outlive client sessions (as on
a TF server) until `Session.reset` clears their container.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

from tensorweave import errors
from tensorweave.distributed import address as hostport
from tensorweave.distributed import keepalive, security
from tensorweave.distributed.bulk import BulkServer
from tensorweave.distributed.cluster import ClusterSpec
from tensorweave.distributed.grpc_master import add_master_service, master_calls
from tensorweave.distributed.grpc_worker import add_worker_service, worker_calls
from tensorweave.distributed.rpc import CHANNEL_OPTIONS, CONTROL_THREADS, MAX_STEP_CALLS, Admission

DEFAULT_HOST = "127.0.0.1"
# NOTE: gRPC sets SO_REUSEPORT by default, so a second server on a taken port would "bind" and
# silently share it; servers turn it off so a taken port is an error.
# NOTE: threads are made as calls need them; a step call beyond MAX_STEP_CALLS is refused
# (rpc.Admission), so the other CONTROL_THREADS always serve control calls, and gRPC refuses
# calls beyond the pool rather than queueing them behind blocked steps.
RPC_THREADS = MAX_STEP_CALLS + CONTROL_THREADS
STOP_DEADLINE_S = 4.0  # `stop` returns within grace plus this, whatever its calls do


class Server:
    """An in-process server for task `task_index` of `job_name` in a cluster.

    Args:
      server_or_cluster_def: a ClusterSpec, or anything ClusterSpec takes (dict, JSON string,
        ClusterDef).
      job_name: this task's job; may be omitted when the cluster has exactly one job.
      task_index: this task's index in the job (default 0).
      protocol: only "grpc".
      config: a ConfigProto or dict; `device_count["CPU"]` sets the number of CPU devices.
      start: start serving now.
      token: the shared token every call must carry (str or bytes); default: the process's
        (`security.configure`, TENSORWEAVE_RPC_TOKEN), if any.
      tls: {"cert": path, "key": path, "ca": path (optional: require client certificates)}
        to serve TLS; default: the process's TLS files, if any (see distributed/security.py).
      bulk_max_connections: connections the bulk port serves at once (bulk.MAX_CONNECTIONS,
        256); more are refused and their clients take gRPC.
      hello_deadline_s: the time a new bulk connection has for its hello and first request
        (bulk.HELLO_DEADLINE_S, 10 s).

    The server binds to its task's address in the cluster (host:port; port 0 picks a free
    port, reflected in `target`).

    Raises:
      ValueError: an unknown job/task or protocol. UnavailableError: the port cannot be bound.
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol="grpc",
                 config=None, start=True, *, token=None, tls=None,
                 bulk_max_connections=None, hello_deadline_s=None):
        if protocol != "grpc":
            raise ValueError(f"Unsupported protocol {protocol!r} (only 'grpc')")
        self.cluster_spec = ClusterSpec(server_or_cluster_def)
        self.job_name, self.task_index = _task_of(self.cluster_spec, job_name, task_index)
        host, port = _split(self.cluster_spec.task_address(self.job_name, self.task_index))
        self.security = security.for_server(token, tls)
        credentials = security.server_credentials(self.security)  # reads the PEM files
        self._master, self._worker, self._steps = _make_master(
            self.cluster_spec, self.job_name, self.task_index, config)
        self._rpc_pool = ThreadPoolExecutor(max_workers=RPC_THREADS, thread_name_prefix="tw-rpc")
        self._admission = Admission()
        self._grpc = grpc.server(self._rpc_pool, maximum_concurrent_rpcs=RPC_THREADS,
                                 interceptors=[*security.server_interceptors(self.security),
                                               self._admission],
                                 options=CHANNEL_OPTIONS + keepalive.server_options()
                                 + [("grpc.so_reuseport", 0)])
        add_master_service(self._master, self._grpc)
        servicer = self._servicer = add_worker_service(self._worker, self._grpc, self._steps)
        self.port = _bind(self._grpc, host, port, credentials)
        self.host = host
        # NOTE: tensors between tasks and client steps skip gRPC: a raw TCP port on the same
        # host (distributed/bulk.py; 0: off)
        calls = {**master_calls(self._master), **worker_calls(servicer)}
        self._bulk = BulkServer(self._steps, host, self.security, calls,
                                max_connections=bulk_max_connections,
                                hello_deadline_s=hello_deadline_s)
        servicer.bulk_port = self._bulk.port
        self._started = False
        self._stopped = threading.Event()
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True) -> Server:
        """A single-task server on 127.0.0.1 and a free port (job "localhost")."""
        return Server({"localhost": [f"{DEFAULT_HOST}:0"]}, "localhost", 0, config=config,
                      start=start)

    @property
    def target(self) -> str:
        """`grpc://host:port`: what `tf.Session(target)` takes."""
        return f"grpc://{hostport.join(self.host, self.port)}"

    @property
    def server_def(self) -> dict:
        return {"cluster": self.cluster_spec.as_dict(), "job_name": self.job_name,
                "task_index": self.task_index, "protocol": "grpc"}

    def start(self) -> None:
        """Starts serving (idempotent). Raises FailedPreconditionError after `stop`."""
        if self._stopped.is_set():
            raise errors.FailedPreconditionError(None, None, "The server has been stopped")
        if not self._started:
            self._grpc.start()
            self._bulk.start()
            self._started = True

    def join(self, timeout: float | None = None) -> None:
        """Blocks until the server stops (or `timeout` seconds pass)."""
        self._stopped.wait(timeout)

    def stop(self, grace: float | None = 1.0) -> None:
        """Stops serving within `grace` + STOP_DEADLINE_S seconds: every step in flight is
        cancelled first (UnavailableError "The server is stopping"), calls in progress get
        `grace` seconds to answer, then the worker is released."""
        if self._stopped.is_set():
            return
        stopping = errors.UnavailableError(None, None, "The server is stopping")
        self._master.abort_steps(stopping)
        self._servicer.stopping.cancel(stopping)
        self._steps.abort_all(stopping)
        end = time.monotonic() + (grace or 0.0) + STOP_DEADLINE_S
        self._bulk.stop(timeout=min(2.0, STOP_DEADLINE_S / 2))
        self._grpc.stop(grace).wait(max(0.1, end - time.monotonic()))
        self._rpc_pool.shutdown(wait=False, cancel_futures=True)
        # NOTE: a handler stuck where no cancellation reaches is left behind, not waited for
        if self._admission.wait_idle(max(0.0, end - time.monotonic())):
            self._rpc_pool.shutdown(wait=True)  # idle threads: they end at once
        self._worker.cleanup_all()
        self._worker.close()
        self._master.close()
        self._stopped.set()

    def metrics(self) -> dict[str, int]:
        """Counters of the server's limits: `bulk_*` (bulk.BulkServer.metrics: connections,
        refused, accept_errors, hello_failures, calls_cancelled), `rpc_in_flight`,
        `rpc_steps_in_flight` and `rpc_steps_refused` (beyond rpc.MAX_STEP_CALLS)."""
        out = {f"bulk_{k}": v for k, v in self._bulk.metrics().items()}
        out.update(rpc_in_flight=self._admission.in_flight,
                   rpc_steps_in_flight=self._admission.steps,
                   rpc_steps_refused=self._admission.refused)
        return out

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _task_of(cluster: ClusterSpec, job_name, task_index) -> tuple[str, int]:
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError(f"job_name must be given for a cluster with jobs {cluster.jobs}")
        job_name = cluster.jobs[0]
    if task_index is None:
        if cluster.num_tasks(job_name) != 1:
            raise ValueError(f"task_index must be given: job {job_name!r} has "
                             f"{cluster.num_tasks(job_name)} tasks")
        task_index = cluster.task_indices(job_name)[0]
    cluster.task_address(job_name, task_index)  # raises for an unknown task
    return job_name, int(task_index)


def _split(address: str) -> tuple[str, int]:
    """(bare host, port) of a task address; "localhost" binds 127.0.0.1. Raises ValueError."""
    host, port = hostport.split(address)
    return (DEFAULT_HOST if host in ("", "localhost") else host), port


def _bind(server: grpc.Server, host: str, port: int, credentials=None) -> int:
    """Binds `host:port` (TLS with `credentials`, else plaintext); returns the bound port."""
    address = hostport.join(host, port)
    try:
        bound = (server.add_insecure_port(address) if credentials is None
                 else server.add_secure_port(address, credentials))
    except RuntimeError as e:
        bound, why = 0, str(e)
    else:
        why = "the port is in use or the address is not local"
    if not bound:
        raise errors.UnavailableError(None, None, f"Cannot bind a server to {address}: {why}")
    return bound


def _make_master(cluster: ClusterSpec, job: str, task: int, config):
    """(LocalMaster over the cluster, this task's shared worker, the task's step table)."""
    from tensorweave.distributed.cluster_steps import ClusterWorkerCache
    from tensorweave.distributed.remote import make_step_table
    from tensorweave.master.master import LocalMaster
    from tensorweave.master.options import SessionOptions
    from tensorweave.runtime.device import local_device_names
    from tensorweave.runtime.worker import LocalWorker

    opts = SessionOptions.from_config(config)
    if opts.intra_op_threads > 0:  # NOTE: the server's own steps' kernels (remote partitions)
        from tensorweave.runtime.kernels.cpu import parallel

        parallel.set_num_threads(opts.intra_op_threads)
    worker = LocalWorker(local_device_names(job, task, opts.cpus), opts.inter_op_threads)
    steps, workers = make_step_table(cluster, job, task, worker)
    return LocalMaster(ClusterWorkerCache(workers)), worker, steps


__all__ = ["Server"]
