"""Every user error of the `tensorweave` command: one line on stderr, exit status 2, no traceback.

Run through `main(argv)` with the starting of servers and clusters replaced by a failure, so a
mistake that slips through fails the test instead of serving forever; a few also run as real
processes (the console script's stderr is what a user sees).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.cli.main import main

FIXTURE_CKPT = os.path.join(os.path.dirname(__file__), "..", "data", "ckpt", "model.ckpt-1234")


@pytest.fixture(scope="module")
def graph_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("graphs")
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable(tf.ones([2, 2]), name="w")
        tf.reduce_sum(tf.nn.relu(tf.matmul(x, w)) * np.float32(2.0), name="out")
        tf.train.export_meta_graph(str(d / "g.meta"))
    tf.train.write_graph(g, str(d), "g.pb", as_text=False)
    (d / "notes.txt").write_text("not a graph\n")
    return d


@pytest.fixture
def busy_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    yield s.getsockname()[1]
    s.close()


@pytest.fixture(autouse=True)
def nothing_starts(monkeypatch):
    """Servers and clusters must not start (a usage error is found first); no signal
    handlers are installed in the test process."""
    from tensorweave.distributed import local_cluster, server_main

    def refuse(*args, **kwargs):
        raise AssertionError("a server or cluster started: the usage error was not caught")

    monkeypatch.setattr(server_main, "serve_until", refuse)
    monkeypatch.setattr(local_cluster, "LocalCluster", refuse)
    monkeypatch.setattr("signal.signal", lambda *a: None)


def _one_line_exit_2(argv, capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("tensorweave"), err
    return err


CLUSTER = json.dumps({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"]})

CASES = {
    "no command": ([], "required: COMMAND"),
    "unknown command": (["sever"], "invalid choice: 'sever'"),
    "serve: no --model_base_path": (["serve", "--model_name", "m"],
                                    "required: --model_base_path"),
    "serve: missing directory": (["serve", "--model_name", "m", "--model_base_path", "/nope"],
                                 "/nope: no such directory"),
    "explain: missing --fetch": (["explain", "{g}/g.pb"], "required: --fetch"),
    "explain: no such file": (["explain", "{g}/nope.pb", "--fetch", "out"], "no such file"),
    "explain: not a graph": (["explain", "{g}/notes.txt", "--fetch", "out"], "is not a GraphDef"),
    "explain: directory without SavedModel": (["explain", "{g}", "--fetch", "out"],
                                              "without saved_model.pb"),
    "explain: missing fetch": (["explain", "{g}/g.pb", "--fetch", "outt:0", "--feed", "x:0"],
                               "closest: out"),
    "explain: fetch output out of range": (["explain", "{g}/g.pb", "--fetch", "out:1"],
                                           "has 1 output(s); use out:0"),
    "explain: missing feed": (["explain", "{g}/g.pb", "--fetch", "out", "--feed", "y:0"],
                              "--feed y:0: no op named 'y'"),
    "explain: placeholder not fed": (["explain", "{g}/g.pb", "--fetch", "out:0"],
                                     "add a --feed for each placeholder"),
    "explain: unknown pass": (["explain", "{g}/g.pb", "--fetch", "out:0", "--feed", "x:0",
                               "--disable", "bogus_pass"], "passes: constant_folding"),
    "explain: --devices 0": (["explain", "{g}/g.pb", "--fetch", "out", "--devices", "0"],
                             "must be 1 or more"),
    "inspect: no checkpoint": (["inspect", "{g}/missing.ckpt"], "no checkpoint at"),
    "inspect: unknown tensor": (["inspect", FIXTURE_CKPT, "--tensor", "dense/kernal"],
                                "closest: dense/kernel"),
    "cluster: --workers -1": (["cluster", "--workers", "-1"], "must be 0 or more, not -1"),
    "cluster: no tasks": (["cluster", "--ps", "0", "--workers", "0"], "at least one task"),
    "cluster: --cpus 0": (["cluster", "--cpus", "0"], "must be 1 or more"),
    "cluster: --workers x": (["cluster", "--workers", "x"], "not a whole number"),
    "server: bad JSON": (["server", "--cluster", "{ps: [1]}"], "not valid JSON"),
    "server: JSON not an object": (["server", "--cluster", "[1, 2]"], "JSON object of jobs"),
    "server: missing --job": (["server", "--cluster", CLUSTER], "job_name must be given"),
    "server: unknown --job": (["server", "--cluster", CLUSTER, "--job", "chief"],
                              "No such job"),
    "server: missing --task": (["server", "--cluster", CLUSTER, "--job", "worker"],
                               "task_index must be given"),
    "server: --task out of range": (["server", "--cluster", CLUSTER, "--job", "ps",
                                     "--task", "4"], "No task with index 4"),
    "server: --job without --cluster": (["server", "--job", "worker"], "need --cluster"),
    "server: bad port": (["server", "--port", "70000"], "is not a port"),
    "server: host does not resolve": (["server", "--host", "no-such-host.invalid"],
                                      "does not resolve"),
    "server: unreadable token file": (["server", "--token-file", "{g}/no-token"],
                                      "cannot read it"),
    "server: cert without key": (["server", "--tls-cert", "{g}/notes.txt"], "go together"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_user_error_is_one_line_and_exit_2(case, graph_files, capsys):
    argv, expected = CASES[case]
    err = _one_line_exit_2([a.replace("{g}", str(graph_files)) for a in argv], capsys)
    assert expected in err


def test_port_in_use_is_a_usage_error(busy_port, capsys):
    err = _one_line_exit_2(["server", "--port", str(busy_port)], capsys)
    assert f"port {busy_port}" in err and "in use" in err
    cluster = json.dumps({"worker": [f"127.0.0.1:{busy_port}"]})
    assert "in use" in _one_line_exit_2(["server", "--cluster", cluster], capsys)


def test_bare_op_name_feeds_its_first_output(graph_files, capsys):
    assert main(["explain", str(graph_files / "g.pb"), "--fetch", "out", "--feed", "x"]) == 0
    assert "- fed: x" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"tensorweave {tf.__version__}\n"


@pytest.mark.multiprocess
def test_console_script_prints_one_line(graph_files, busy_port):
    """As a user sees it: the real process's stderr (also no gRPC log line for a busy port)."""
    for argv in (["explain", str(graph_files / "g.pb"), "--fetch", "out", "--disable", "x"],
                 ["server", "--port", str(busy_port)]):
        out = subprocess.run([sys.executable, "-m", "tensorweave.cli.main", *argv],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    out = subprocess.run([sys.executable, "-m", "tensorweave.cli.main", "--version"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("tensorweave ")
