"""`train_and_evaluate` over a cluster from TF_CONFIG, as TF 1.15 runs it: a chief, a worker
and a ps task, each its own process on 127.0.0.1 with its role in TF_CONFIG, plus an evaluator
evaluating the chief's checkpoints as they appear (tests/estimator/tf_config_task.py: the
DNNClassifier of examples/estimator_digits.py). The cluster reaches the accuracy of the same
program run in one process; the evaluator returns its metrics and export results
(a LatestExporter's and a FinalExporter's SavedModels under model_dir/export/). Every wait
has a deadline; every process is ended at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tensorweave as tf
from tensorweave.distributed.local_cluster import free_ports

pytestmark = [pytest.mark.slow, pytest.mark.multiprocess, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
TASK = str(Path(__file__).with_name("tf_config_task.py"))
STEPS, SAVE_STEPS = 600, 200
DEADLINE_S = 300


@pytest.fixture
def processes():
    started: list[subprocess.Popen] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def _start(processes, model_dir, tf_config=None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("TF_CONFIG", None)
    if tf_config is not None:
        env["TF_CONFIG"] = json.dumps(tf_config)
    p = subprocess.Popen([sys.executable, TASK, "--model-dir", str(model_dir), "--steps",
                          str(STEPS), "--save-steps", str(SAVE_STEPS)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    processes.append(p)
    return p


def _result(p) -> tuple[dict, str]:
    out, _ = p.communicate(timeout=DEADLINE_S)
    assert p.returncode == 0, out
    line = next(x for x in out.splitlines() if x.startswith("result "))
    return json.loads(line[len("result "):]), out


def _evaluated_steps(model_dir: Path) -> list[int]:
    steps = []
    for f in sorted((model_dir / "eval").glob("events.out.tfevents.*")):
        steps += [e.step for e in tf.train.summary_iterator(str(f)) if e.HasField("summary")]
    return sorted(steps)


def test_a_tf_config_cluster_trains_the_estimator_to_the_single_process_accuracy(
        processes, tmp_path):
    ports = free_ports(3)
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"],
               "ps": [f"127.0.0.1:{ports[2]}"]}
    model_dir = tmp_path / "cluster"

    def role(kind: str) -> dict:
        return {"cluster": cluster, "task": {"type": kind, "index": 0}}

    ps = _start(processes, model_dir, role("ps"))
    chief = _start(processes, model_dir, role("chief"))
    worker = _start(processes, model_dir, role("worker"))
    evaluator = _start(processes, model_dir, role("evaluator"))
    local = _start(processes, tmp_path / "local")
    (chief_out, chief_log), (worker_out, _) = _result(chief), _result(worker)
    evaluated, _ = _result(evaluator)
    alone, _ = _result(local)
    assert ps.poll() is None, "the ps task serves until it is ended"
    assert chief_out == {"role": "chief"} and worker_out == {"role": "worker"}
    print(f"estimator accuracy: cluster {evaluated['accuracy']:.3f} at step "
          f"{evaluated['global_step']}, one process {alone['accuracy']:.3f}")
    assert evaluated["global_step"] >= STEPS
    assert alone["accuracy"] > 0.9
    assert evaluated["accuracy"] >= alone["accuracy"] - 0.03, (evaluated, alone)
    # the evaluator followed the checkpoints as they came, and stopped after the final one
    steps = _evaluated_steps(model_dir)
    assert len(steps) >= 2 and steps[-1] >= STEPS, steps
    # the evaluator's exporters: the latest two exports kept, the final one once, servable
    latest, final = evaluated["exports"]
    assert sorted(os.listdir(model_dir / "export" / "latest"))[-1] == os.path.basename(latest)
    assert len(os.listdir(model_dir / "export" / "latest")) <= 2
    assert os.listdir(model_dir / "export" / "final") == [os.path.basename(final)]
    with tf.Session(graph=tf.Graph()) as sess:
        from tensorweave.saved_model import loader

        sig = loader.load(sess, ["serve"], final).signature_def["serving_default"]
        assert sig.inputs and sig.outputs
    # the variables lived on the ps: only the chief wrote checkpoints, none by the worker
    assert "Waiting 5 secs before starting training" not in chief_log
