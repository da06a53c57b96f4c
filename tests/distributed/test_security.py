"""Security of servers: the shared token, TLS (server-only and mutual), and graphs that would
run Python or smuggle code through attrs, refused when they arrive over the network."""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import threading

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed import security
from tensorweave.distributed.server import Server
from tensorweave.ops.script_ops import py_func
from tensorweave.proto import attr_value_pb2, graph_pb2, types_pb2
from tensorweave.proto import worker_service_pb2 as wpb
from tests.distributed.servers import server_process

TOKEN = "s3cret-t0ken"
DEV = "/job:localhost/replica:0/task:0/device:CPU:0"
QUICK = tf.ConfigProto(operation_timeout_in_ms=5000)


@pytest.fixture(scope="module", autouse=True)
def _clean_env():
    """The module runs without the caller's TENSORWEAVE_* security settings (restored after);
    tests change them with monkeypatch."""
    with pytest.MonkeyPatch.context() as mp:
        for var in security.SecurityConfig().environment():
            mp.delenv(var, raising=False)
        yield


def _run_three(target: str) -> int:
    with tf.Graph().as_default(), tf.Session(target, config=QUICK) as sess:
        return int(sess.run(tf.constant(1) + 2))


# -- configuration ---------------------------------------------------------------------------
def test_configure_sets_and_exports_the_process_config(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("not read here")
    previous = security.configure(token=TOKEN + "\n", tls_ca=str(ca))
    try:
        assert previous == security.SecurityConfig()
        assert security.rpc_token() == TOKEN.encode() and security.tls_enabled()
        assert os.environ["TENSORWEAVE_RPC_TOKEN"] == TOKEN
        assert os.environ["TENSORWEAVE_TLS_CA"] == str(ca)
        assert TOKEN not in repr(security.current())  # the token never shows in reprs
    finally:
        security.configure()
    assert security.rpc_token() is None and not security.tls_enabled()
    assert "TENSORWEAVE_RPC_TOKEN" not in os.environ


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="printable ASCII"):
        security.configure(token="two words")
    with pytest.raises(ValueError, match="together"):
        security.configure(tls_cert=str(tmp_path / "c.pem"))
    with pytest.raises(ValueError, match="'cert' and 'key'"):
        Server({"localhost": ["127.0.0.1:0"]}, tls={"cert": "c.pem"}, start=False)
    assert security.current() == security.SecurityConfig()


# -- the token -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def token_server():
    server = Server({"localhost": ["127.0.0.1:0"]}, token=TOKEN)
    yield server
    server.stop()


def test_token_right_wrong_and_missing(token_server, monkeypatch):
    with pytest.raises(errors.UnauthenticatedError, match="missing or wrong token"):
        _run_three(token_server.target)
    monkeypatch.setenv("TENSORWEAVE_RPC_TOKEN", TOKEN + "x")
    with pytest.raises(errors.UnauthenticatedError, match="missing or wrong token"):
        _run_three(token_server.target)
    monkeypatch.setenv("TENSORWEAVE_RPC_TOKEN", TOKEN)
    assert _run_three(token_server.target) == 3


def test_token_guards_every_method_before_parsing(token_server):
    address = token_server.target.removeprefix("grpc://")
    with grpc.insecure_channel(address) as ch:
        for method in ("/tensorweave.MasterService/CreateSession",
                       "/tensorweave.WorkerService/GetStatus"):
            with pytest.raises(grpc.RpcError) as info:  # garbage: refused, not parsed
                ch.unary_unary(method)(b"\xff\xfe garbage", timeout=5)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        stream = ch.unary_stream("/tensorweave.WorkerService/RecvTensor")
        with pytest.raises(grpc.RpcError) as info:
            list(stream(b"", timeout=5, metadata=[("authorization", "Bearer wrong")]))
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


# -- graphs from the network -----------------------------------------------------------------
def _py_func_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(np.float32(2.0))
        y = py_func(lambda v: v * np.float32(21), [x], tf.float32)
    return g, y


def test_py_func_runs_locally_but_not_on_a_server_in_this_very_process():
    g, y = _py_func_graph()
    with tf.Session(graph=g) as sess:
        assert sess.run(y) == 42.0
    # NOTE: the server shares this process's py_func registry; it must refuse anyway.
    with Server.create_local_server() as server:
        with pytest.raises(errors.InvalidArgumentError,
                           match="op PyFunc runs Python in the client process; it cannot run "
                                 "in a graph received over the network"):
            with tf.Session(server.target, graph=g) as sess:
                sess.run(y)
        assert _run_three(server.target) == 3


def test_code_smuggled_into_an_attr_is_refused(tmp_path):
    marker = tmp_path / "ran"
    g = graph_pb2.GraphDef()
    arg = g.node.add(name="a", op="_Arg")
    arg.attr["T"].type = types_pb2.DT_FLOAT
    # NOTE: a string here once reached generated Python source (runtime/executor.py).
    arg.attr["index"].s = f"0]; open({str(marker)!r}, 'w'); v = args[0".encode()
    ret = g.node.add(name="r", op="_Retval", input=["a"])
    ret.attr["T"].type = types_pb2.DT_FLOAT
    ret.attr["index"].CopyFrom(attr_value_pb2.AttrValue(i=0))
    with Server.create_local_server() as server:
        with grpc.insecure_channel(server.target.removeprefix("grpc://")) as ch:
            register = ch.unary_unary("/tensorweave.WorkerService/RegisterGraph")
            with pytest.raises(grpc.RpcError) as info:
                register(wpb.RegisterGraphRequest(graph_def=g, device=DEV).SerializeToString(),
                         timeout=5)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "attr 'index' must be int, got a string value" in info.value.details()
    assert not marker.exists()


def test_check_received_graph_accepts_what_sessions_send():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        v = tf.Variable(tf.ones([3, 2]), name="v")
        y = tf.nn.relu(tf.matmul(x, v) + 1.0)
        tf.reduce_sum(tf.concat([y, y], axis=1), name="total")
    security.check_received_graph(g.as_graph_def())


# -- processes: token file, TLS --------------------------------------------------------------
@pytest.mark.multiprocess
def test_server_process_with_a_token_file(tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with server_process("--port", "0", "--token-file", str(token_file)) as (_, target):
        with pytest.raises(errors.UnauthenticatedError):
            _run_three(target)
        monkeypatch.setenv("TENSORWEAVE_RPC_TOKEN", TOKEN)
        assert _run_three(target) == 3
        g, y = _py_func_graph()
        with pytest.raises(errors.InvalidArgumentError, match="op PyFunc runs Python"):
            with tf.Session(target, graph=g, config=QUICK) as sess:
                sess.run(y)


def _openssl(*args: str, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _ec_request(name: str, subject: str, cwd) -> None:
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=cwd)


def _signed(name: str, ca: str, cwd, ext: str | None = None) -> None:
    args = ["x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.pem", "-days", "2"]
    _openssl(*args, *(["-extfile", ext] if ext else []), cwd=cwd)


def _make_ca(name: str, cwd) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
             "-subj", f"/CN={name}", cwd=cwd)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1 and a client certificate it signed, and a
    second CA that signed nothing here: {name: path} of the PEM files."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    d = tmp_path_factory.mktemp("certs")
    _make_ca("ca", d)
    _make_ca("other_ca", d)
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _ec_request("server", "/CN=127.0.0.1", d)
    _signed("server", "ca", d, "san.ext")
    _ec_request("client", "/CN=tensorweave-client", d)
    _signed("client", "ca", d)
    return {p.stem + p.suffix.replace(".", "_"): str(p) for p in d.iterdir()}


@pytest.mark.multiprocess
def test_mutual_tls_server_process(certs, monkeypatch):
    flags = ["--tls-cert", certs["server_pem"], "--tls-key", certs["server_key"],
             "--tls-ca", certs["ca_pem"]]
    with server_process("--port", "0", *flags) as (_, target):
        with pytest.raises(errors.UnavailableError, match="HINT: a server that serves TLS"):
            _run_three(target)  # a plaintext client
        monkeypatch.setenv("TENSORWEAVE_TLS_CA", certs["ca_pem"])
        with pytest.raises(errors.UnavailableError, match="requires client certificates"):
            _run_three(target)  # no client certificate
        monkeypatch.setenv("TENSORWEAVE_TLS_CLIENT_CERT", certs["client_pem"])
        monkeypatch.setenv("TENSORWEAVE_TLS_CLIENT_KEY", certs["client_key"])
        assert _run_three(target) == 3
        monkeypatch.setenv("TENSORWEAVE_TLS_CA", certs["other_ca_pem"])
        with pytest.raises(errors.UnavailableError):
            _run_three(target)  # the server's certificate is not signed by this CA


def test_server_only_tls_with_a_token(certs, monkeypatch):
    tls = {"cert": certs["server_pem"], "key": certs["server_key"]}
    with Server({"localhost": ["127.0.0.1:0"]}, token=TOKEN, tls=tls) as server:
        assert server.security.serves_tls and server.security.tls_ca is None
        monkeypatch.setenv("TENSORWEAVE_TLS_CA", certs["ca_pem"])
        with pytest.raises(errors.UnauthenticatedError):
            _run_three(server.target)
        monkeypatch.setenv("TENSORWEAVE_RPC_TOKEN", TOKEN)
        assert _run_three(server.target) == 3


def _serve_once(listener: socket.socket, ctx: ssl.SSLContext, outcome: list) -> None:
    conn, _ = listener.accept()
    try:
        with ctx.wrap_socket(conn, server_side=True) as tls:
            tls.sendall(tls.recv(5).upper())
            outcome.append("ok")
    except (ssl.SSLError, OSError) as e:
        outcome.append(e)


def _ssl_exchange(server_cfg, client_cfg) -> tuple[bytes | Exception, list]:
    """One TLS exchange between `server_ssl_context` and `client_ssl_context` contexts."""
    outcome: list = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(10)
        t = threading.Thread(target=_serve_once, daemon=True, args=(
            listener, security.server_ssl_context(server_cfg), outcome))
        t.start()
        try:
            with socket.create_connection(listener.getsockname(), timeout=10) as raw, \
                    security.client_ssl_context(client_cfg).wrap_socket(
                        raw, server_hostname="127.0.0.1") as tls:
                tls.sendall(b"hello")
                got: bytes | Exception = tls.recv(5)
        except (ssl.SSLError, OSError) as e:
            got = e
        t.join(10)
    return got, outcome


def test_ssl_contexts_for_raw_sockets_match_the_grpc_settings(certs):
    server_cfg = security.SecurityConfig(tls_cert=certs["server_pem"],
                                         tls_key=certs["server_key"], tls_ca=certs["ca_pem"])
    client_cfg = security.SecurityConfig(tls_ca=certs["ca_pem"],
                                         client_cert=certs["client_pem"],
                                         client_key=certs["client_key"])
    assert _ssl_exchange(server_cfg, client_cfg) == (b"HELLO", ["ok"])
    got, outcome = _ssl_exchange(server_cfg, client_cfg.replace(client_cert=None,
                                                                client_key=None))
    assert got != b"HELLO" and isinstance(outcome[0], ssl.SSLError)  # no client certificate
    assert security.server_ssl_context(security.SecurityConfig()) is None
    assert security.client_ssl_context(security.SecurityConfig()) is None
