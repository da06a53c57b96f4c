"""`tensorweave cluster --ps N --workers M`: real processes, targets printed, Ctrl-C stops all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import tensorweave as tf

pytestmark = pytest.mark.multiprocess


def _read_lines(proc, n: int, timeout: float = 30.0) -> list[str]:
    lines, end = [], time.monotonic() + timeout
    while len(lines) < n and time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
    return lines


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_cluster_command_serves_every_task_and_stops_them_on_ctrl_c():
    proc = subprocess.Popen([sys.executable, "-m", "tensorweave.cli.main", "cluster", "--ps", "1",
                             "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        lines = _read_lines(proc, 5)
        assert lines[0].startswith("cluster "), lines
        spec = json.loads(lines[0].split(" ", 1)[1])
        assert len(spec["ps"]) == 1 and len(spec["worker"]) == 2
        targets = dict(line.split(" ") for line in lines[1:4])
        assert set(targets) == {"/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"}
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                  text=True).stdout.split()
        assert len(children) == 3
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(4.0)
            with tf.Session(targets["/job:worker/task:1"]) as s:
                s.run(v.initializer)
                assert s.run(v * 2.0) == 8.0
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
        end = time.monotonic() + 10
        while any(_alive(int(c)) for c in children) and time.monotonic() < end:
            time.sleep(0.1)
        assert not any(_alive(int(c)) for c in children), "a task outlived the cluster command"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _start_cluster():
    # NOTE: its own session, so the test can signal its whole process group as a terminal's
    # Ctrl-C does (every task gets the SIGINT too, then the command's own SIGTERM).
    return subprocess.Popen([sys.executable, "-m", "tensorweave.cli.main", "cluster", "--ps", "1",
                             "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _children(proc) -> list[str]:
    return subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                          text=True).stdout.split()


def _stopped_within(proc, seconds: float) -> float:
    """Ctrl-C as a terminal sends it; how long until the command and all its tasks are gone."""
    children = _children(proc)
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        assert proc.wait(30) == 0, proc.stderr.read()
        while any(_alive(int(c)) for c in children) and time.monotonic() - start < 30:
            time.sleep(0.02)
        took = time.monotonic() - start
        assert not any(_alive(int(c)) for c in children), "a task outlived the cluster command"
        assert took < seconds, f"one Ctrl-C took {took:.1f} s to stop the cluster"
        assert "Traceback" not in proc.stderr.read()
        return took
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_one_ctrl_c_to_the_process_group_stops_every_task_promptly():
    """Before: the tasks' stop ran inside their signal handler, the command's SIGTERM re-entered
    it, and each task was SIGKILLed after LocalCluster's 5 s grace."""
    from tensorweave.distributed.local_cluster import STOP_GRACE_S

    proc = _start_cluster()
    assert "serving" in _read_lines(proc, 5)[-1]
    time.sleep(1.0)
    _stopped_within(proc, STOP_GRACE_S - 1.0)


def test_ctrl_c_while_the_tasks_start_stops_them_too():
    proc = _start_cluster()
    end = time.monotonic() + 60
    while not _children(proc) and time.monotonic() < end:
        time.sleep(0.01)
    assert _children(proc), "no task started"
    _stopped_within(proc, 20.0)
