"""`ModelServer`: one model's versions behind TF Serving's gRPC and REST APIs.

    server = ModelServer("mnist", "/models/mnist", port=8500, rest_api_port=8501)
    server.start()        # loads the newest complete version, then serves
    ...
    server.stop()

Requests beyond `max_inflight` at once are refused with UNAVAILABLE (HTTP 503) rather than
queued without bound; gRPC messages and REST bodies over `max_request_bytes` are refused
(RESOURCE_EXHAUSTED / HTTP 413). Token and TLS come from `security` (distributed/security.py):
the same environment variables and files as `tensorweave server`.
"""

from __future__ import annotations

import threading
from concurrent import futures

import grpc

from tensorweave import errors
from tensorweave.distributed import security
from tensorweave.serving import wire
from tensorweave.serving.api import Models
from tensorweave.serving.batching import Batcher, BatchingOptions
from tensorweave.serving.grpc_service import ServingServicer
from tensorweave.serving.rest import RestApi, RestServer
from tensorweave.serving.versions import ModelVersions


class BoundedRunner:
    """A runner that lets at most `limit` signature runs wait or run at once."""

    def __init__(self, runner, limit: int):
        self._runner, self._slots = runner, threading.BoundedSemaphore(limit)
        self.limit = limit

    def __call__(self, servable, signature, inputs, keys):
        if not self._slots.acquire(blocking=False):
            raise errors.UnavailableError(None, None, f"The server is busy: {self.limit} "
                                          "requests are in flight (--max_inflight)")
        try:
            return self._runner(servable, signature, inputs, keys)
        finally:
            self._slots.release()


def _direct(servable, signature, inputs, keys):
    return servable.run(signature, inputs, keys)


class ModelServer:
    """Serves model `name` from the numbered versions under `base_path`.

    Args:
      port: gRPC port (0: any free port; None: no gRPC).
      rest_api_port: REST port (0: any free port; None: no REST).
      host: the address to bind (127.0.0.1 unless given).
      poll_seconds: how often `base_path` is scanned for new versions.
      batching: a BatchingOptions to batch concurrent requests, or None.
      token, tls: as `tensorweave server` takes them (security.for_server).
    """

    def __init__(self, name: str, base_path: str, port: int | None = 8500,
                 rest_api_port: int | None = 8501, host: str = "127.0.0.1",
                 poll_seconds: float = 1.0, batching: BatchingOptions | None = None,
                 max_request_bytes: int = 64 << 20, max_inflight: int = 64,
                 token=None, tls=None):
        self.security = security.for_server(token, tls)
        self.versions = ModelVersions(name, base_path, poll_seconds)
        self.batcher = Batcher(batching) if batching is not None else None
        runner = self.batcher.run if self.batcher is not None else _direct
        self.models = Models({name: self.versions}, BoundedRunner(runner, max_inflight))
        self._grpc = self._grpc_server(host, port, max_request_bytes) if port is not None \
            else None
        self._rest = RestServer(RestApi(self.models), host, rest_api_port, self.security,
                                max_request_bytes) if rest_api_port is not None else None
        self.rest_api_port = self._rest.port if self._rest is not None else None

    def _grpc_server(self, host: str, port: int, max_bytes: int):
        interceptors = [security.TokenInterceptor(self.security.token)] \
            if self.security.token is not None else []
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=16),
                             interceptors=interceptors,
                             options=[("grpc.max_receive_message_length", max_bytes),
                                      ("grpc.max_send_message_length", max_bytes)])
        server.add_generic_rpc_handlers(wire.generic_handlers(ServingServicer(self.models)))
        credentials = security.server_credentials(self.security)
        address = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
        self.port = server.add_insecure_port(address) if credentials is None else \
            server.add_secure_port(address, credentials)
        if not self.port:
            raise OSError(f"cannot bind the gRPC port {address}")
        return server

    def start(self) -> None:
        """Loads what is on disk now, then serves (and keeps polling)."""
        self.versions.start()
        if self._grpc is not None:
            self._grpc.start()
        if self._rest is not None:
            self._rest.start()

    def stop(self, grace: float = 2.0) -> None:
        if self._rest is not None:
            self._rest.stop()
        if self._grpc is not None:
            self._grpc.stop(grace).wait(grace + 5)
        if self.batcher is not None:
            self.batcher.stop()
        self.versions.stop()
