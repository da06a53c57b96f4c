"""The REST side of `tensorweave serve`: TF Serving's HTTP API.

    GET  /v1/models/NAME[/versions/N|/labels/L]            model version status
    GET  /v1/models/NAME[/versions/N|/labels/L]/metadata   signatures
    POST /v1/models/NAME[/versions/N|/labels/L]:predict    {"instances": [...]} | {"inputs": ...}
    POST /v1/models/NAME[/versions/N|/labels/L]:classify   {"examples": [...], "context": {...}}
    POST /v1/models/NAME[/versions/N|/labels/L]:regress

Errors come back as `{"error": MESSAGE}` with TF Serving's HTTP status for the code (400 for
INVALID_ARGUMENT, 404 for NOT_FOUND, ...). Bodies over `max_body_bytes` are refused (413)
before they are read; with a token every call needs `Authorization: Bearer TOKEN` (401).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format

from tensorweave import errors
from tensorweave.distributed import security
from tensorweave.serving import rest_json
from tensorweave.serving.api import Models, Spec, status_code_name
from tensorweave.serving.servable import invalid, not_found

_LOG = logging.getLogger("tensorweave")
_PATH = re.compile(r"^/v1/models/(?P<name>[^/:]+)"
                   r"(?:/versions/(?P<version>-?\d+)|/labels/(?P<label>[^/:]+))?"
                   r"(?P<rest>/metadata|:predict|:classify|:regress)?$")
_HTTP = {errors.OK: 200, errors.INVALID_ARGUMENT: 400, errors.FAILED_PRECONDITION: 400,
         errors.OUT_OF_RANGE: 400, errors.NOT_FOUND: 404, errors.ALREADY_EXISTS: 409,
         errors.PERMISSION_DENIED: 403, errors.UNAUTHENTICATED: 401,
         errors.RESOURCE_EXHAUSTED: 429, errors.UNIMPLEMENTED: 501, errors.UNAVAILABLE: 503,
         errors.DEADLINE_EXCEEDED: 504}


class _HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _spec(match, signature_name: str = "") -> Spec:
    version = match.group("version")
    return Spec(match.group("name"), int(version) if version is not None else None,
                match.group("label"), signature_name)


def _status_json(statuses) -> dict:
    return {"model_version_status": [
        {"version": str(s.version), "state": _STATE_NAMES.get(s.state, "UNKNOWN"),
         "status": {"error_code": status_code_name(s.error_code),
                    "error_message": s.error_message}} for s in statuses]}


_STATE_NAMES = {0: "UNKNOWN", 10: "START", 20: "LOADING", 30: "AVAILABLE", 40: "UNLOADING",
                50: "END"}


class RestApi:
    """The handlers (JSON body in, JSON body out) over `models`."""

    def __init__(self, models: Models):
        self.models = models

    def get(self, path: str) -> dict:
        match = _PATH.match(path)
        if match is None or match.group("rest") not in (None, "/metadata"):
            raise invalid(f"Malformed request: GET {path}")
        spec = _spec(match)
        if match.group("rest") == "/metadata":
            return self._metadata(spec)
        return _status_json(self.models.status(spec))

    def post(self, path: str, body: bytes) -> dict:
        match = _PATH.match(path)
        if match is None or match.group("rest") not in (":predict", ":classify", ":regress"):
            raise invalid(f"Malformed request: POST {path}")
        request = _parse(body)
        spec = _spec(match, _signature_name(request))
        if match.group("rest") == ":predict":
            return self._predict(spec, request)
        examples = rest_json.examples_from_json(request)
        if match.group("rest") == ":classify":
            _, _, rows = self.models.classify(spec, examples)
            return {"results": [[[label, score] for label, score in row] for row in rows]}
        _, _, values = self.models.regress(spec, examples)
        return {"results": values}

    def _predict(self, spec: Spec, request: dict) -> dict:
        has_rows, has_cols = "instances" in request, "inputs" in request
        if has_rows == has_cols:
            raise invalid("JSON Value must contain exactly one of 'instances' (row format) or "
                          "'inputs' (columnar format)")
        with self.models.versions(spec.name).serving(spec.version, spec.label) as servable:
            sig = servable.signature(spec.signature_name or None)
        if has_rows:
            inputs = rest_json.instances_to_inputs(request["instances"], sig)
        else:
            inputs = rest_json.columns_to_inputs(request["inputs"], sig)
        _, _, outputs = self.models.predict(spec, inputs)
        if has_rows:
            batch = len(request["instances"])
            return {"predictions": rest_json.rows_json(outputs, batch)}
        return {"outputs": rest_json.columns_json(outputs)}

    def _metadata(self, spec: Spec) -> dict:
        version, signatures = self.models.metadata(spec)
        sigs = {k: json_format.MessageToDict(v, preserving_proto_field_name=True)
                for k, v in signatures.items()}
        return {"model_spec": {"name": spec.name, "signature_name": "",
                               "version": str(version)},
                "metadata": {"signature_def": {"signature_def": sigs}}}


def _parse(body: bytes) -> dict:
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise invalid(f"JSON Parse error: {e}") from None
    if not isinstance(request, dict):
        raise invalid("JSON Value must be an object")
    return request


def _signature_name(request: dict) -> str:
    name = request.get("signature_name", "")
    if not isinstance(name, str):
        raise invalid("'signature_name' key must be a string value.")
    return name


# -- the HTTP server ----------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    server_version = "tensorweave-serve"
    protocol_version = "HTTP/1.1"
    timeout = 60   # NOTE: a client that stops sending mid-body frees its thread
    api: RestApi
    token: bytes | None = None
    max_body_bytes: int = 64 << 20

    def log_message(self, fmt, *args):  # noqa: D102 - quiet by default
        _LOG.debug("rest: " + fmt, *args)

    def do_GET(self):  # noqa: N802
        self._respond(lambda: self.api.get(self.path.split("?")[0]))

    def do_POST(self):  # noqa: N802
        self._respond(lambda: self.api.post(self.path.split("?")[0], self._body()))

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._chunked_body()
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise _HttpError(400, "Content-Length is not a number") from None
        if length > self.max_body_bytes:
            self.close_connection = True
            self._discard(length)
            raise _HttpError(413, f"Request body is {length} bytes; the limit is "
                                  f"{self.max_body_bytes} (--max_request_bytes)")
        return self.rfile.read(length)

    def _chunked_body(self) -> bytes:
        """A `Transfer-Encoding: chunked` body, refused (413) once past the limit."""
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024).split(b";")[0].strip()
            try:
                size = int(line, 16)
            except ValueError:
                raise _HttpError(400, "malformed chunked body") from None
            if size == 0:
                self.rfile.readline(1024)   # the blank line after the last chunk
                return b"".join(parts)
            total += size
            if total > self.max_body_bytes:
                self.close_connection = True
                raise _HttpError(413, f"Request body is over the limit of "
                                      f"{self.max_body_bytes} bytes (--max_request_bytes)")
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)       # the CRLF after each chunk

    def _discard(self, length: int) -> None:
        """Reads (and drops) a refused body of up to 64 MiB, so the client sees the answer
        rather than a reset connection; larger ones are cut off."""
        left = min(length, 64 << 20)
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 16))
            if not chunk:
                break
            left -= len(chunk)

    def _respond(self, work) -> None:
        try:
            self._check_token()
            status, body = 200, work()
        except _HttpError as e:
            status, body = e.status, {"error": e.message}
        except errors.OpError as e:
            status, body = _HTTP.get(e.error_code, 500), {"error": e.message}
        except Exception as e:  # NOTE: a bug answers 500 and the server keeps serving
            _LOG.exception("REST request %s failed", self.path)
            status, body = 500, {"error": f"{type(e).__name__}: {e}"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _check_token(self) -> None:
        if self.token is None:
            return
        if not security.token_matches([("authorization", self.headers.get("Authorization",
                                                                           ""))], self.token):
            raise _HttpError(401, security.UNAUTHENTICATED_MESSAGE)


class RestServer:
    """A threaded HTTP(S) server for `api` on `host:port` (port 0: any free port)."""

    def __init__(self, api: RestApi, host: str, port: int, config=None,
                 max_body_bytes: int = 64 << 20):
        config = config or security.current()
        handler = type("Handler", (_Handler,), {"api": api, "token": config.token,
                                                 "max_body_bytes": max_body_bytes})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        ctx = security.server_ssl_context(config)
        if ctx is not None:
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="rest",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


__all__ = ["RestApi", "RestServer", "not_found"]
