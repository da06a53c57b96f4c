"""A cluster on real separate hosts: 1 ps and 2 workers, each in its own network namespace
(tests/distributed/netns.py), trained by netns_train.py from worker 0's host; then network faults
mid-training (a link taken down, a host dropping its packets, a task restarted on another
address). Each fault ends the step with UnavailableError naming the task within the silent-peer
deadline (distributed/keepalive.py; 4 s here), never a hang, and the retry loop resumes from the
latest checkpoint without losing a saved step.

Skips with the reason where namespaces cannot be made (no privilege). Nothing leaves the
namespaces: every address is in 198.18.0.0/15.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.distributed import netns

pytestmark = [pytest.mark.slow, pytest.mark.multiprocess]

ROOT = Path(__file__).resolve().parents[2]
TRAIN = str(Path(__file__).with_name("netns_train.py"))
TOOL = str(Path(sys.executable).with_name("tensorweave"))
PEER_TIMEOUT_S = 4.0
DETECT_LIMIT_S = PEER_TIMEOUT_S + 11.0   # generous: the machine is loaded
ENV = {**os.environ, "TENSORWEAVE_PEER_TIMEOUT_S": str(PEER_TIMEOUT_S),
       "PYTHONPATH": str(ROOT / "src")}
TASKS = [("ps", 0), ("worker", 0), ("worker", 1)]
FAULT_AT, FAULTED_STEPS = 25, 75     # the fault once step 25 is saved (netns_train saves every 25)


@pytest.fixture
def hosts():
    why = netns.unavailable()
    if why is not None:
        pytest.skip(why)
    with netns.Hosts(4) as h:
        yield h
    assert netns.leftovers() == []


def _spec(h, host_of_task=(0, 1, 2)) -> dict:
    addr = [f"{h.addresses[i]}:2222" for i in host_of_task]
    return {"ps": [addr[0]], "worker": [addr[1], addr[2]]}


def _serve(h, spec: dict, host_of_task=(0, 1, 2), env=None) -> list[subprocess.Popen]:
    procs = []
    for (job, task), host in zip(TASKS, host_of_task):
        p = h.run(host, [TOOL, "server", "--cluster", json.dumps(spec), "--job", job,
                         "--task", str(task)], env=env or ENV)
        line = p.stdout.readline()
        assert line.startswith("target grpc://"), line
        procs.append(p)
    return procs


def _train(h, spec: dict, logdir, *, steps: int, retries: int = 0, pause: float = 0.0,
           env=None):
    return h.run(1, [sys.executable, TRAIN, "--logdir", str(logdir), "--cluster", json.dumps(spec),
                     "--steps", str(steps), "--retries", str(retries), "--step-pause", str(pause)],
                 env=env or ENV)


def _local_accuracy(logdir, steps: int) -> float:
    out = subprocess.run([sys.executable, TRAIN, "--logdir", str(logdir), "--steps", str(steps)],
                         capture_output=True, text=True, env=ENV, timeout=60, check=True).stdout
    return float(re.search(r"accuracy ([\d.]+)", out).group(1))


def _follow(proc, on_line, timeout_s: float = 60.0) -> list[str]:
    """The lines `proc` prints, each handed to `on_line(line)` as it comes."""
    lines, end = [], time.monotonic() + timeout_s
    for line in proc.stdout:
        lines.append(line.rstrip())
        on_line(line)
        assert time.monotonic() < end, "\n".join(lines)
    assert proc.wait(timeout=10) == 0, "\n".join(lines)
    return lines


def _faulted_run(h, tmp_path, fault, env=None) -> tuple[list[str], float]:
    """Trains FAULTED_STEPS; `fault(h)` once step FAULT_AT is saved; heals when the error shows.
    Returns (lines, seconds from the fault to the error)."""
    spec = _spec(h)
    _serve(h, spec, env=env)
    when: dict = {}

    def on_line(line):
        if line.startswith(f"saved step {FAULT_AT}\n") and "fault" not in when:
            fault(h)
            when["fault"] = time.monotonic()
        elif line.startswith("error") and "error" not in when:
            when["error"] = time.monotonic()
            h.heal(2)

    # NOTE: two recoveries allowed: after dropped packets heal, the ps's stream to the faulted
    # host may still be reset on the next step (one loaded CI run), and the loop recovers again
    lines = _follow(_train(h, spec, tmp_path / "ckpt", steps=FAULTED_STEPS, retries=2, pause=0.01,
                           env=env), on_line)
    assert "error" in when, "\n".join(lines)
    return lines, when["error"] - when["fault"]


def _check_recovered(lines: list[str], detected_s: float) -> None:
    text = "\n".join(lines)
    error = next(line for line in lines if line.startswith("error"))
    assert error.startswith("error UnavailableError"), text
    assert "/job:worker/replica:0/task:1" in error, text
    assert detected_s < DETECT_LIMIT_S, text
    saved = [int(m) for m in re.findall(r"saved step (\d+)", text.split(error)[0])]
    resumed = int(re.search(r"resumed from step (\d+)", text).group(1))
    assert resumed == max(saved) >= FAULT_AT, text      # no saved step lost
    assert re.search(rf"accuracy [\d.]+ steps {FAULTED_STEPS}", text), text


def test_trains_over_three_hosts_to_the_single_process_accuracy(hosts, tmp_path):
    spec = _spec(hosts)
    _serve(hosts, spec)
    lines = _follow(_train(hosts, spec, tmp_path / "cluster", steps=300), lambda _: None)
    cluster = float(re.search(r"accuracy ([\d.]+)", lines[-1]).group(1))
    local = _local_accuracy(tmp_path / "local", 300)
    assert local > 0.85
    assert abs(cluster - local) <= 0.03, (cluster, local)


def test_a_link_taken_down_mid_training_fails_the_step_within_the_deadline(hosts, tmp_path):
    lines, detected = _faulted_run(hosts, tmp_path, lambda h: h.link_down(2))
    _check_recovered(lines, detected)


def test_a_link_taken_down_under_tls_fails_over_grpc_within_the_deadline(hosts, tmp_path):
    """With TLS the bulk sockets are off: every call and tensor takes gRPC, whose keepalive
    pings find the silent peer."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    env = {**ENV, **_tls_env(tmp_path, hosts.addresses)}
    lines, detected = _faulted_run(hosts, tmp_path, lambda h: h.link_down(2), env=env)
    _check_recovered(lines, detected)
    assert "Bulk transport" not in "\n".join(lines)


def _tls_env(d, addresses) -> dict:
    """A CA and one certificate for every host address (servers and clients alike)."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=30)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=tw-test-ca")
    (d / "san.ext").write_text("subjectAltName=" + ",".join(f"IP:{a}" for a in addresses) + "\n")
    openssl("req", "-new", *ec, "-keyout", "task.key", "-out", "task.csr", "-subj", "/CN=task")
    openssl("x509", "-req", "-in", "task.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "task.pem", "-days", "2", "-extfile", "san.ext")
    return {"TENSORWEAVE_TLS_CERT": str(d / "task.pem"), "TENSORWEAVE_TLS_KEY": str(d / "task.key"),
            "TENSORWEAVE_TLS_CA": str(d / "ca.pem")}


def test_a_host_dropping_its_packets_fails_the_step_within_the_deadline(hosts, tmp_path):
    lines, detected = _faulted_run(hosts, tmp_path, lambda h: h.drop(2))
    _check_recovered(lines, detected)


def test_a_task_restarted_on_another_host_address_resumes_from_the_checkpoint(hosts, tmp_path):
    """Worker 1's host goes silent; the task comes back on host 3 (another address): the step
    fails naming the task within the deadline; the cluster restarted with the new spec (as TF
    clusters are: the spec is fixed per server) resumes from the checkpoint."""
    spec = _spec(hosts)
    servers = _serve(hosts, spec)
    when: dict = {}

    def on_line(line):
        if line.startswith(f"saved step {FAULT_AT}\n") and "fault" not in when:
            hosts.link_down(2)
            when["fault"] = time.monotonic()
        elif line.startswith("error") and "error" not in when:
            when["error"] = time.monotonic()

    first = _follow_failing(_train(hosts, spec, tmp_path / "ckpt", steps=FAULTED_STEPS),
                            on_line)
    for p in servers:
        p.kill()
        p.wait(timeout=10)
    moved = (0, 1, 3)
    _serve(hosts, _spec(hosts, moved), moved)
    second = _follow(_train(hosts, _spec(hosts, moved), tmp_path / "ckpt", steps=FAULTED_STEPS),
                     lambda _: None)
    _check_recovered(first + second, when["error"] - when["fault"])


def _follow_failing(proc, on_line) -> list[str]:
    lines = []
    for line in proc.stdout:
        lines.append(line.rstrip())
        on_line(line)
    assert proc.wait(timeout=30) != 0, "\n".join(lines)
    return [line for line in lines if not line.startswith(("Traceback", " "))]


RUN_TASK = str(ROOT / "examples" / "k8s" / "run_task.py")
DEMO = str(ROOT / "examples" / "cnn_digits.py")
EPOCHS = "3"


def test_the_demo_trains_over_three_hosts_from_tf_config(hosts, tmp_path):
    """examples/k8s/run_task.py as each pod runs it, TF_CONFIG per host: the demo's own cluster
    client on each worker, then the launcher's evaluation; as accurate as one process."""
    spec = _spec(hosts)

    def task_env(job: str, index: int) -> dict:
        return {**ENV, "TF_CONFIG": json.dumps({"cluster": spec,
                                                "task": {"type": job, "index": index}})}

    def start(host: int, job: str, index: int, *flags: str):
        return hosts.run(host, [sys.executable, RUN_TASK, "--logdir", str(tmp_path / f"h{host}"),
                                "--epochs", EPOCHS, *flags], env=task_env(job, index))

    ps = start(0, "ps", 0)
    assert ps.stdout.readline().startswith("target grpc://198.18.0.1:2222")
    chief = start(1, "worker", 0)
    other = start(2, "worker", 1, "--exit-when-done")
    lines = []
    for line in chief.stdout:
        lines.append(line.rstrip())
        if line.startswith("client done"):
            break
    assert lines[-1] == "client done: exit 0", "\n".join(lines)
    assert other.wait(timeout=120) == 0, other.stdout.read()
    evaluation = subprocess.run(
        hosts.argv(1, [sys.executable, RUN_TASK, "--evaluate", "--logdir", str(tmp_path / "h1"),
                       "--epochs", EPOCHS]),
        env=task_env("worker", 0), capture_output=True, text=True, timeout=120)
    assert evaluation.returncode == 0, evaluation.stdout + evaluation.stderr
    cluster = float(re.search(r"test accuracy: ([\d.]+)", evaluation.stdout).group(1))
    single = subprocess.run([sys.executable, DEMO, "--epochs", EPOCHS, "--no-progress",
                             "--logdir", str(tmp_path / "single")],
                            capture_output=True, text=True, env=ENV, timeout=120, cwd=tmp_path)
    local = float(re.search(r"test accuracy: ([\d.]+)", single.stdout).group(1))
    print(f"demo test accuracy: cluster of 3 namespace hosts {cluster:.3f}, one process "
          f"{local:.3f}")
    # NOTE: two asynchronous workers (stale gradients, how stale depends on the load) over 3
    # epochs: one loaded CI run gave 0.908 against one process's 0.961
    assert cluster >= local - 0.08 and cluster > 0.85, (cluster, local)
