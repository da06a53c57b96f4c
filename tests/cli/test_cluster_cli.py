"""`tensorweave cluster --ps N --workers M`: real processes, targets printed, Ctrl-C stops all."""

from __future__ import annotations

import json
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
