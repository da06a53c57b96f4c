"""`tensorweave server --from-env`: the task of TF_CONFIG is served; its mistakes are usage
errors (one line, exit 2)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tensorweave.cli.main import main

TOOL = str(Path(sys.executable).with_name("tensorweave"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.multiprocess
def test_from_env_serves_the_task_of_tf_config():
    ports = [_free_port(), _free_port()]
    config = {"cluster": {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]},
              "task": {"type": "worker", "index": 0}}
    proc = subprocess.Popen([TOOL, "server", "--from-env"], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TF_CONFIG": json.dumps(config)})
    try:
        assert proc.stdout.readline().strip() == f"target grpc://127.0.0.1:{ports[1]}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize("config,argv,message", [
    (None, [], "TF_CONFIG has no cluster and task"),
    ("{oops", [], "TF_CONFIG is not valid JSON"),
    ({"cluster": {"chief": ["h:1"]}, "task": {"type": "evaluator", "index": 0}}, [],
     "an evaluator task is outside the cluster"),
    ({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": 0}},
     ["--job", "worker"], "--from-env takes the task from TF_CONFIG"),
])
def test_from_env_mistakes_are_usage_errors(config, argv, message, monkeypatch, capsys):
    if config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", config if isinstance(config, str) else json.dumps(config))
    assert main(["server", "--from-env", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
