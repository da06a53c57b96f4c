"""Who may call a server, over what, and which graphs it accepts from the network.

One process-wide `SecurityConfig` says whether RPCs carry a shared token and use TLS. It lives
in the environment, so server processes started later (subprocess, multiprocessing) inherit
it; `configure(...)` sets it (and exports it), or set the variables before starting Python:

  TENSORWEAVE_RPC_TOKEN        the shared token (printable ASCII, no spaces)
  TENSORWEAVE_TLS_CERT / _KEY  this process's PEM certificate chain and private key: a server
                               serves TLS with them (and by default presents them as a client)
  TENSORWEAVE_TLS_CA           PEM root certificates: clients verify servers with them, and a
                               server given them requires and verifies client certificates
  TENSORWEAVE_TLS_CLIENT_CERT / _CLIENT_KEY   the certificate a client presents (mutual TLS)

A server with a token refuses every call whose `authorization` metadata is not
`Bearer <token>` with UNAUTHENTICATED; clients attach it to every call (`channel_for`).
`check_received_graph` refuses graphs that would run Python (PyFunc & co), attrs that do not
hold what their op declares, and malformed names and inputs; servers apply it (through
`server_interceptors`) to every GraphDef that arrives over gRPC, before decoding it.
"""

from __future__ import annotations

import collections
import dataclasses
import hmac
import os
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import grpc

from tensorweave import errors

ENV_TOKEN = "TENSORWEAVE_RPC_TOKEN"
ENV_TLS_CERT = "TENSORWEAVE_TLS_CERT"
ENV_TLS_KEY = "TENSORWEAVE_TLS_KEY"
ENV_TLS_CA = "TENSORWEAVE_TLS_CA"
ENV_CLIENT_CERT = "TENSORWEAVE_TLS_CLIENT_CERT"
ENV_CLIENT_KEY = "TENSORWEAVE_TLS_CLIENT_KEY"
_ENV_FIELDS = {"token": ENV_TOKEN, "tls_cert": ENV_TLS_CERT, "tls_key": ENV_TLS_KEY,
               "tls_ca": ENV_TLS_CA, "client_cert": ENV_CLIENT_CERT,
               "client_key": ENV_CLIENT_KEY}
AUTH_KEY = "authorization"
UNAUTHENTICATED_MESSAGE = "missing or wrong token"


# -- the configuration ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SecurityConfig:
    """Token and TLS files of a process (or of one server). Immutable and hashable.

    Attributes:
      token: the shared token (bytes), or None for no token.
      tls_cert, tls_key: paths of the PEM certificate chain and key a server serves with.
      tls_ca: path of PEM root certificates: clients verify servers with them; a server with
        them requires client certificates signed by them.
      client_cert, client_key: the certificate a client presents (default: tls_cert/tls_key).
    """

    token: bytes | None = field(default=None, repr=False)
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    client_cert: str | None = None
    client_key: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "token", _checked_token(self.token))
        for name in ("tls_cert", "tls_key", "tls_ca", "client_cert", "client_key"):
            path = getattr(self, name)
            object.__setattr__(self, name, os.path.abspath(os.fspath(path)) if path else None)
        _check_pair(self.tls_cert, self.tls_key, "tls_cert", "tls_key")
        _check_pair(self.client_cert, self.client_key, "client_cert", "client_key")

    @property
    def serves_tls(self) -> bool:
        """A server with this config serves TLS (it has a certificate and key)."""
        return self.tls_cert is not None

    @property
    def uses_tls(self) -> bool:
        """Clients with this config open TLS channels (any TLS file is set)."""
        return any((self.tls_cert, self.tls_ca, self.client_cert))

    def replace(self, **changes) -> SecurityConfig:
        """A copy with `changes` (field names) applied."""
        return dataclasses.replace(self, **changes)

    def environment(self) -> dict[str, str]:
        """The environment variables that give a child process this config ("" = unset)."""
        out = {}
        for name, var in _ENV_FIELDS.items():
            value = getattr(self, name)
            out[var] = (value.decode("ascii") if isinstance(value, bytes) else value) or ""
        return out

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> SecurityConfig:
        """The config the TENSORWEAVE_* variables describe (empty ones are unset)."""
        paths = {name: environ.get(var) or None for name, var in _ENV_FIELDS.items()
                 if name != "token"}
        return cls(_checked_token(environ.get(ENV_TOKEN)), **paths)


def _checked_token(token: str | bytes | None) -> bytes | None:
    """`token` as stripped bytes (None when empty). Raises ValueError unless printable ASCII
    without spaces (it travels as gRPC metadata)."""
    if token is None:
        return None
    raw = token.encode("utf-8") if isinstance(token, str) else bytes(token)
    raw = raw.strip()
    if not raw:
        return None
    if not all(0x21 <= b <= 0x7E for b in raw):
        raise ValueError("The RPC token must be printable ASCII without spaces "
                         "(it travels as gRPC metadata)")
    return raw


def _check_pair(cert, key, cert_name: str, key_name: str) -> None:
    if (cert is None) != (key is None):
        raise ValueError(f"{cert_name} and {key_name} must be given together")


_lock = threading.Lock()
_cached: tuple[tuple, SecurityConfig] | None = None


def current() -> SecurityConfig:
    """This process's config, as the environment says now (cached while it is unchanged)."""
    global _cached
    key = tuple(os.environ.get(var) for var in _ENV_FIELDS.values())
    with _lock:
        if _cached is None or _cached[0] != key:
            _cached = (key, SecurityConfig.from_environment())
        return _cached[1]


def set_config(config: SecurityConfig) -> SecurityConfig:
    """Makes `config` this process's (exported to os.environ); returns the previous one.

    Channels already opened keep their settings; `channel_for` opens new ones for new settings.
    """
    previous = current()
    for var, value in config.environment().items():
        if value:
            os.environ[var] = value
        else:
            os.environ.pop(var, None)
    return previous


def configure(token: str | bytes | None = None, tls_cert: str | None = None,
              tls_key: str | None = None, tls_ca: str | None = None,
              client_cert: str | None = None, client_key: str | None = None) -> SecurityConfig:
    """Sets this process's token and TLS files (paths); returns the previous config.

    Every argument left out is turned off. Server processes started afterwards inherit the
    settings through the environment.

    Example:
      security.configure(token=open("token").read(), tls_cert="task.pem", tls_key="task.key",
                         tls_ca="ca.pem")

    Raises:
      ValueError: a token that is not printable ASCII, or a certificate without its key.
    """
    return set_config(SecurityConfig(_checked_token(token), tls_cert, tls_key, tls_ca,
                                     client_cert, client_key))


def rpc_token(config: SecurityConfig | None = None) -> bytes | None:
    """The shared token (of `config`, default this process's), or None."""
    return (config or current()).token


def tls_enabled(config: SecurityConfig | None = None) -> bool:
    """Whether channels of this process (or of `config`) use TLS."""
    return (config or current()).uses_tls


def for_server(token: str | bytes | None = None, tls=None,
               base: SecurityConfig | None = None) -> SecurityConfig:
    """The config one server uses: `base` (default this process's) with `token` and/or `tls`
    in its place.

    Args:
      token: the token this server requires (str or bytes), or None to keep base's.
      tls: None to keep base's TLS files, or a mapping with "cert" and "key" (and optionally
        "ca": then clients must present certificates it signed) file paths, or a
        SecurityConfig whose tls_cert/tls_key/tls_ca are taken.

    Raises:
      ValueError: a token that is not printable ASCII; TLS without "cert" and "key".
    """
    cfg = base or current()
    if token is not None:
        cfg = cfg.replace(token=_checked_token(token))
    if isinstance(tls, SecurityConfig):
        tls = {"cert": tls.tls_cert, "key": tls.tls_key, "ca": tls.tls_ca}
    if tls is not None:
        if not tls.get("cert") or not tls.get("key"):
            raise ValueError("tls needs 'cert' and 'key' (paths of PEM files)")
        cfg = cfg.replace(tls_cert=tls["cert"], tls_key=tls["key"], tls_ca=tls.get("ca"))
    return cfg


def server_interceptors(config: SecurityConfig) -> list[grpc.ServerInterceptor]:
    """What a server with `config` puts before its services, outermost first: the token check
    (when there is a token), then request parsing and `check_received_graph` of every
    GraphDef that arrives (`rpc.CheckedRequests`)."""
    from tensorweave.distributed.rpc import CheckedRequests

    out: list[grpc.ServerInterceptor] = []
    if config.token is not None:
        out.append(TokenInterceptor(config.token))
    out.append(CheckedRequests(request_checks()))
    return out


# -- TLS credentials -----------------------------------------------------------------------------
def _read(path: str | None) -> bytes | None:
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def server_credentials(config: SecurityConfig | None = None) -> grpc.ServerCredentials | None:
    """gRPC server credentials (None when the config has no server certificate); with a CA,
    clients must present a certificate it signed."""
    cfg = config or current()
    if not cfg.serves_tls:
        return None
    ca = _read(cfg.tls_ca)
    return grpc.ssl_server_credentials([(_read(cfg.tls_key), _read(cfg.tls_cert))],
                                       root_certificates=ca, require_client_auth=ca is not None)


def _client_pair(cfg: SecurityConfig) -> tuple[str | None, str | None]:
    if cfg.client_cert is not None:
        return cfg.client_cert, cfg.client_key
    return cfg.tls_cert, cfg.tls_key


def channel_credentials(config: SecurityConfig | None = None) -> grpc.ChannelCredentials | None:
    """gRPC channel credentials (None when TLS is off): servers verified with the CA (the
    system's roots without one), the client certificate presented when there is one."""
    cfg = config or current()
    if not cfg.uses_tls:
        return None
    cert, key = _client_pair(cfg)
    return grpc.ssl_channel_credentials(root_certificates=_read(cfg.tls_ca),
                                        private_key=_read(key), certificate_chain=_read(cert))


def server_ssl_context(config: SecurityConfig | None = None) -> ssl.SSLContext | None:
    """An `ssl` server context with the same settings (None when the config serves no TLS)."""
    cfg = config or current()
    if cfg.tls_cert is None:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cfg.tls_cert, cfg.tls_key)
    if cfg.tls_ca is not None:
        ctx.load_verify_locations(cafile=cfg.tls_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def client_ssl_context(config: SecurityConfig | None = None) -> ssl.SSLContext | None:
    """An `ssl` client context with the same settings (None when TLS is off); it checks the
    server's hostname, so pass `server_hostname` when wrapping a socket."""
    cfg = config or current()
    if not cfg.uses_tls:
        return None
    ctx = ssl.create_default_context(cafile=cfg.tls_ca)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    cert, key = _client_pair(cfg)
    if cert is not None:
        ctx.load_cert_chain(cert, key)
    return ctx


# -- the token -----------------------------------------------------------------------------------
def bearer(token: bytes) -> str:
    """The `authorization` metadata value carrying `token`."""
    return "Bearer " + token.decode("ascii")


def token_matches(metadata, token: bytes) -> bool:
    """Whether call `metadata` ((key, value) pairs) carries `Bearer <token>` (constant time)."""
    expected = bearer(token).encode("ascii")
    for key, value in metadata or ():
        if key == AUTH_KEY:
            got = value.encode("utf-8", "replace") if isinstance(value, str) else bytes(value)
            return hmac.compare_digest(got, expected)
    return False


class TokenInterceptor(grpc.ServerInterceptor):
    """Ends every call without the right `authorization: Bearer <token>` with UNAUTHENTICATED.

    The refused request is never deserialized. Thread-safe (stateless after construction).
    """

    def __init__(self, token: bytes):
        self._token = _checked_token(token)
        if self._token is None:
            raise ValueError("TokenInterceptor needs a non-empty token")

    def intercept_service(self, continuation, handler_call_details):
        if token_matches(handler_call_details.invocation_metadata, self._token):
            return continuation(handler_call_details)
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        return _refusing_handler(handler)


def _refuse(request, context):
    context.abort(grpc.StatusCode.UNAUTHENTICATED, UNAUTHENTICATED_MESSAGE)


def _refuse_stream(request, context):
    context.abort(grpc.StatusCode.UNAUTHENTICATED, UNAUTHENTICATED_MESSAGE)
    yield  # pragma: no cover - abort raises


def _refusing_handler(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """A handler of the same streaming kind that refuses the call (raw bytes, never parsed)."""
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(_refuse_stream)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(_refuse)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(_refuse_stream)
    return grpc.unary_unary_rpc_method_handler(_refuse)


class _TokenAttacher(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds `authorization: Bearer <token>` to every call of a channel."""

    def __init__(self, token: bytes):
        self._entry = (AUTH_KEY, bearer(token))

    def _with_token(self, details):
        metadata = [*(details.metadata or ()), self._entry]
        return _CallDetails(details.method, details.timeout, metadata, details.credentials,
                            details.wait_for_ready, details.compression)

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._with_token(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._with_token(client_call_details), request)


class _CallDetails(
        collections.namedtuple("_CallDetails", ("method", "timeout", "metadata", "credentials",
                                                "wait_for_ready", "compression")),
        grpc.ClientCallDetails):
    """A call's details with our metadata (grpc's own class has no constructor)."""


def with_token(channel: grpc.Channel, token: bytes | None) -> grpc.Channel:
    """`channel` whose every call carries `token` (the channel itself when token is None)."""
    return channel if token is None else grpc.intercept_channel(channel, _TokenAttacher(token))


# -- graphs from the network ---------------------------------------------------------------------
# NOTE: these kernels call Python callables registered in the process that built the graph;
# in a server a received token could name one of the server's own functions.
CLIENT_ONLY_OPS = frozenset(["PyFunc", "PyFuncStateless", "EagerPyFunc", "_PyGeneratorDataset"])
# The methods whose request carries a `graph_def` that came over the network, and whether that
# graph must be complete (every input names one of its nodes): an extension may name nodes the
# session already has.
GRAPH_METHODS = {"/tensorweave.MasterService/CreateSession": True,
                 "/tensorweave.MasterService/ExtendSession": False,
                 "/tensorweave.WorkerService/RegisterGraph": True}


def _fail(node, where: str, message: str):
    return errors.InvalidArgumentError(None, None,
                                       f"Node '{node.name}'{where} (op {node.op}): {message}")


def refuse_client_only_ops(graph_def) -> None:
    """Raises InvalidArgumentError when a GraphDef proto (or one of its library functions)
    holds an op that runs Python in the process that built the graph (`CLIENT_ONLY_OPS`)."""
    bodies = [("", graph_def.node)] + [(f" in function '{f.signature.name}'", f.node_def)
                                       for f in graph_def.library.function]
    for where, nodes in bodies:
        for n in nodes:
            if n.op in CLIENT_ONLY_OPS:
                raise _fail(n, where, f"op {n.op} runs Python in the client process; it "
                                      "cannot run in a graph received over the network")


# AttrSpec type -> the AttrValue field that holds it.
_ATTR_FIELDS = {"string": "s", "int": "i", "float": "f", "bool": "b", "type": "type",
                "shape": "shape", "tensor": "tensor", "func": "func"}
_FIELD_KINDS = {**{f: k for k, f in _ATTR_FIELDS.items()}, "list": "list",
                "placeholder": "function placeholder"}


def _kind_error(value, spec) -> str | None:
    """Why `value` (an AttrValue proto) does not hold a `spec.type` value, or None."""
    which = value.WhichOneof("value")
    if spec.type.startswith("list("):
        inner = _ATTR_FIELDS.get(spec.type[5:-1])
        if which != "list":
            return f"a {_FIELD_KINDS[which]} value"
        others = [f for f in _ATTR_FIELDS.values() if f != inner and len(getattr(value.list, f))]
        return f"a list of {_FIELD_KINDS[others[0]]} values" if others else None
    wanted = _ATTR_FIELDS.get(spec.type)
    return f"a {_FIELD_KINDS[which]} value" if wanted is not None and which != wanted else None


def _value_error(value, spec) -> str | None:
    """Why the values of `value` break `spec`'s minimum or allowed values, or None."""
    if spec.type == "int" and spec.minimum is not None and value.i < spec.minimum:
        return f"{value.i}, less than its minimum {spec.minimum}"
    if spec.type.startswith("list(") and spec.minimum is not None:
        n = max(len(getattr(value.list, f)) for f in _ATTR_FIELDS.values())
        if n < spec.minimum:
            return f"{n} values, fewer than its minimum {spec.minimum}"
    if not spec.allowed or spec.type not in ("type", "list(type)", "string"):
        return None
    items = [value.s.decode("utf-8", "replace")] if spec.type == "string" else \
        [value.type] if spec.type == "type" else list(value.list.type)
    for item in items:
        if _allowed(item, spec) is not True:
            return f"{_allowed(item, spec)}, not one of its allowed values"
    return None


def _allowed(item, spec) -> bool | str:
    """True when `item` (a string or a DataType enum) is allowed, else how to name it."""
    if isinstance(item, str):
        return item in spec.allowed or repr(item)
    from tensorweave import dtypes

    try:
        dt = dtypes.as_dtype(item)
    except (TypeError, ValueError):
        return f"DataType {item}"
    return dt in spec.allowed or dt.base_dtype in spec.allowed or dt.name


def _check_attrs(node, op_def, where: str) -> None:
    """Every attr the op declares is present (or has a default) and fits its declaration.
    Attrs it does not declare are left alone (passes add some, e.g. _FusedMatMul's grad_b)."""
    for spec in op_def.attrs.values():
        value = node.attr.get(spec.name) if spec.name in node.attr else None
        if value is None or value.WhichOneof("value") is None:
            if not spec.has_default:
                raise _fail(node, where, f"missing attr '{spec.name}' ({spec.type})")
            continue
        why = _kind_error(value, spec) or _value_error(value, spec)
        if why is not None:
            raise _fail(node, where, f"attr '{spec.name}' must be {spec.type}, got {why}")


def _arity(args, node, op_def) -> int:
    """How many tensors the arg specs `args` (an op's inputs or outputs) stand for."""
    n = 0
    for arg in args:
        if arg.number_attr:
            n += _attr_int(node, op_def, arg.number_attr)
        elif arg.type_list_attr:
            attr = node.attr.get(arg.type_list_attr) if arg.type_list_attr in node.attr else None
            default = op_def.attrs[arg.type_list_attr].default
            n += len(attr.list.type) if attr is not None else len(default or ())
        else:
            n += 1
    return n


def _attr_int(node, op_def, name: str) -> int:
    if name in node.attr:
        return int(node.attr[name].i)
    default = op_def.attrs[name].default
    return int(default) if isinstance(default, int) else 0


def _data_inputs(node, where: str) -> list[tuple[str, int]]:
    """(node, output) of each data input; checks spelling and that controls come last."""
    from tensorweave import ir

    data, control = [], False
    for text in node.input:
        src, index, is_control = ir.parse_input(text)
        if not src or ":" in src or "^" in src:
            raise _fail(node, where, f"malformed input '{text}' (expected 'node', "
                                     "'node:<output>' or '^node')")
        if is_control:
            control = True
        elif control:
            raise _fail(node, where, f"data input '{text}' comes after a control input")
        else:
            data.append((src, index))
    return data


def _check_body(nodes, where: str, complete: bool | None) -> None:
    """Names unique and well formed and attrs as declared; unless `complete` is None (a
    function body, whose inputs may name signature args and `node:output:i`), data inputs as
    many as each op takes; when `complete`, every input naming a node and output of `nodes`."""
    from tensorweave.ops.registry import OPS

    outputs: dict[str, int | None] = {}
    for n in nodes:
        if not n.name or ":" in n.name or n.name.startswith("^") or n.name in outputs:
            raise _fail(n, where, "the node name is empty, malformed or not unique")
        op_def = OPS.get(n.op)
        data = _data_inputs(n, where) if complete is not None else None
        outputs[n.name] = None
        if op_def is None:
            continue  # NOTE: the runtime names unknown ops (NotFoundError)
        _check_attrs(n, op_def, where)
        expected = _arity(op_def.inputs, n, op_def)
        if data is not None and len(data) != expected:
            raise _fail(n, where, f"{len(data)} data inputs, but the op takes {expected}")
        outputs[n.name] = _arity(op_def.outputs, n, op_def)
    if complete:
        _check_edges(nodes, where, outputs)


def _check_edges(nodes, where: str, outputs: dict) -> None:
    from tensorweave import ir

    for n in nodes:
        for text in n.input:
            src, index, _ = ir.parse_input(text)
            if src not in outputs:
                raise _fail(n, where, f"input '{text}' names no node of the graph")
            n_out = outputs[src]
            if n_out is not None and index >= n_out:
                raise _fail(n, where, f"input '{text}' names output {index} of a node with "
                                      f"{n_out} outputs")


def check_received_graph(graph_def, complete: bool = True) -> None:
    """The checks a GraphDef proto received over the network passes before it is decoded:
    no op that runs Python (`CLIENT_ONLY_OPS`); node names unique, without ':' or '^'; every
    attr an op declares present (or defaulted) and of its declared kind, minimum and allowed
    values (so no string reaches where an int belongs); data inputs as many as the op takes,
    before control inputs; and when `complete`, every input naming a node of the graph and
    one of its outputs. Library function bodies get the same checks but those of inputs.

    Raises: InvalidArgumentError naming the node (and function).
    """
    refuse_client_only_ops(graph_def)
    _check_body(graph_def.node, "", complete)
    for f in graph_def.library.function:
        _check_body(f.node_def, f" in function '{f.signature.name}'", None)


def _check_recv_key(request) -> None:
    from tensorweave.runtime.rendezvous import parse_key

    parse_key(request.rendezvous_key)


def request_checks() -> dict:
    """{method: check(request)} for `rpc.CheckedRequests`: `check_received_graph` of the
    `graph_def` of each of `GRAPH_METHODS`, and a RecvTensor key must parse."""
    def check(complete):
        return lambda request: check_received_graph(request.graph_def, complete)

    out = {method: check(complete) for method, complete in GRAPH_METHODS.items()}
    out["/tensorweave.WorkerService/RecvTensor"] = _check_recv_key
    return out


__all__ = [
    "SecurityConfig", "configure", "set_config", "current", "for_server", "rpc_token",
    "tls_enabled", "server_interceptors",
    "server_credentials", "channel_credentials", "server_ssl_context", "client_ssl_context",
    "TokenInterceptor", "with_token", "token_matches", "CLIENT_ONLY_OPS", "GRAPH_METHODS",
    "refuse_client_only_ops", "check_received_graph", "request_checks",
]
