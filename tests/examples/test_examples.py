"""Smoke tests of the runnable examples: each runs in a subprocess (as a user runs it) and
must print its final metric; the CNN demo must reach >= 0.97 test accuracy in under a
minute. Skipped, naming what is missing, while the public namespace lacks what a script
uses."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

@functools.cache
def _run(script: str, *args: str, timeout: float = 120) -> str:
    """The script's stdout + stderr; the script must exit 0."""
    pytest.importorskip("sklearn", reason="the examples extra (scikit-learn)")
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    return output


def _metric(output: str, label: str) -> float:
    found = re.findall(rf"^{label}: ([0-9.]+)", output, flags=re.M)
    assert found, f"no '{label}:' line in:\n{output[-2000:]}"
    return float(found[-1])


def test_linear_regression_recovers_the_true_parameters():
    out = _run("linear_regression.py")
    line = re.search(r"^fitted w: (.*)  b: (\S+)", out, flags=re.M)
    assert line, out
    w = [float(v) for v in line.group(1).split()]
    assert w == pytest.approx([2.0, -3.4, 1.5], abs=0.02)
    assert float(line.group(2)) == pytest.approx(4.2, abs=0.02)
    assert _metric(out, "final mse") < 0.001


def test_logistic_regression_classifies_digits():
    assert _metric(_run("logistic_regression.py"), "test accuracy") >= 0.93


def test_mlp_classifies_digits():
    assert _metric(_run("mlp.py"), "test accuracy") >= 0.95


@pytest.mark.slow
def test_cnn_demo_reaches_97_percent_within_a_minute(tmp_path):
    out = _run("cnn_digits.py", "--logdir", str(tmp_path), timeout=180)
    assert _metric(out, "test accuracy") >= 0.97
    assert _metric(out, "time") < 60.0
    assert "\r" not in out  # no progress bar when stdout is not a terminal
    assert len(re.findall(r"^epoch +\d+: loss", out, flags=re.M)) == 15


def test_cnn_demo_flags_shorten_the_run(tmp_path):
    out = _run("cnn_digits.py", "--epochs", "1", "--batch-size", "128", "--logdir", str(tmp_path),
               timeout=120)
    assert len(re.findall(r"^epoch +\d+: loss", out, flags=re.M)) == 1
    assert 0.0 < _metric(out, "test accuracy") <= 1.0
    # NOTE: the demo says where its graph is and how to explain it; the command it prints runs
    command = re.search(r"^graph: \S+\.meta  \(.*: tensorweave (explain .*)\)$", out, re.M)
    assert command, out[-2000:]
    proc = subprocess.run([sys.executable, "-m", "tensorweave.cli.main",
                           *command.group(1).split(), "--counts"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "partitioned" in proc.stdout


def test_cnn_demo_checkpoints_resumes_and_writes_logs(tmp_path):
    """Every epoch leaves a checkpoint; a second run resumes from the latest; TensorBoard
    events and a Chrome trace are written."""
    import json

    first = _run("cnn_digits.py", "--epochs", "2", "--logdir", str(tmp_path), timeout=120)
    assert "resumed" not in first
    ckpts = sorted(p.name for p in (tmp_path / "checkpoints").glob("*.index"))
    assert len(ckpts) == 2
    second = _run("cnn_digits.py", "--epochs", "3", "--logdir", str(tmp_path), timeout=120)
    assert "resumed from" in second
    assert len(re.findall(r"^epoch +\d+: loss", second, flags=re.M)) == 1  # only epoch 3
    assert list(tmp_path.glob("events.out.tfevents.*"))
    trace = json.loads((tmp_path / "train_step_trace.json").read_text())
    assert any(e.get("ph") == "X" for e in trace["traceEvents"])
    import tensorweave as tf

    shards = sorted((tmp_path / "records").glob("train-*-of-00004.tfrecord"))
    assert len(shards) == 4  # the training split, streamed through tf.data
    assert sum(1 for p in shards for _ in tf.python_io.tf_record_iterator(str(p))) == 1437


@pytest.mark.slow
@pytest.mark.multiprocess
def test_cnn_demo_trains_over_a_local_cluster(tmp_path):
    """`--cluster`: 1 ps and 2 worker processes, each worker its own client (between-graph
    replication, asynchronous); the launcher evaluates the ps variables afterwards."""
    out = _run("cnn_digits.py", "--cluster", "--epochs", "4", "--logdir", str(tmp_path),
               timeout=400)
    for task in (0, 1):
        assert len(re.findall(rf"^worker {task} epoch +\d+: loss", out, flags=re.M)) == 4
    assert _metric(out, "test accuracy") >= 0.9
    assert list((tmp_path / "cluster_checkpoints").glob("model-*.index"))


def test_cnn_digits_cluster_script_is_the_cluster_demo():
    """Run directly, it is `cnn_digits.py --cluster` (it used to print nothing and exit 0)."""
    out = _run("cnn_digits_cluster.py", "--help")
    assert out.startswith("usage: cnn_digits_cluster.py") and "--workers" in out


@pytest.mark.multiprocess
def test_cluster_client_runs_on_a_running_cluster():
    """The README's own-script example: the printed spec in, variables on the ps, steps on a
    worker; a second run (on the other worker) continues from the ps's variables."""
    from tensorweave.distributed.local_cluster import LocalCluster

    with LocalCluster(ps=1, workers=2) as cluster:
        spec = cluster.cluster_json
        first = _run("cluster_client.py", "--cluster", spec, "--reset")
        second = _run("cluster_client.py", "--cluster", spec, "--task", "1", "--steps", "5")
    assert "w: /job:ps/task:0" in first and "initialized the variables" in first
    assert _metric(first, "final mse") < 1e-4
    assert "continuing from the ps's variables: mse 0.0000" in second


def test_quickstart_shows_what_pruning_kept():
    out = _run("quickstart.py")
    assert "predicted classes:" in out
    assert "pruned away (not needed for the fetches):" in out
    assert "Square" in out  # the weight-norm branch nobody fetched


def test_custom_op_example_registers_op_kernel_and_gradient():
    out = _run("custom_op.py")
    assert "soft_clip: [-1.99" in out and "op: SoftClip" in out


def test_estimator_digits_trains_and_evaluates(tmp_path):
    out = _run("estimator_digits.py", "--steps", "600", "--model-dir", str(tmp_path))
    assert _metric(out, "global step") == 600
    assert _metric(out, "test accuracy") >= 0.9
    assert (tmp_path / "eval").is_dir()
