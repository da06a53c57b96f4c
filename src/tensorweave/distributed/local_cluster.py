"""`LocalCluster`: a cluster of real server processes on 127.0.0.1, one per task.

What `tensorweave cluster --ps N --workers M`, the demo's `--cluster` and the tests use.
Ports are chosen free before the processes start (every task must know every address up
front); each process prints its target once serving. `stop()` ends every process (SIGTERM,
then SIGKILL after a grace) and reaps it; `kill` and `restart` exist to exercise faults.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time

START_TIMEOUT_S = 60.0  # NOTE: a loaded CI machine once took over 30 s to start a task
STOP_GRACE_S = 5.0


def free_ports(n: int) -> list[int]:
    """`n` distinct ports that were free on 127.0.0.1 a moment ago."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class LocalCluster:
    """`ps` parameter-server tasks and `workers` worker tasks, each its own process.

    Raises: RuntimeError when a task does not start within START_TIMEOUT_S (the others are
    stopped first).
    """

    def __init__(self, ps: int = 1, workers: int = 2, cpus: int = 1, extra_args=()):
        ports = iter(free_ports(ps + workers))
        self.spec = {"ps": [f"127.0.0.1:{next(ports)}" for _ in range(ps)],
                     "worker": [f"127.0.0.1:{next(ports)}" for _ in range(workers)]}
        self.spec = {job: tasks for job, tasks in self.spec.items() if tasks}
        self._cpus = cpus
        self._extra = list(extra_args)
        self.procs: dict[tuple[str, int], subprocess.Popen] = {}
        try:
            for job, tasks in self.spec.items():
                for i in range(len(tasks)):
                    self.procs[(job, i)] = self._spawn(job, i)
            for key, proc in self.procs.items():
                _wait_serving(proc, key)
        except BaseException:
            self.stop()
            raise

    # -- addresses ------------------------------------------------------------------------
    def target(self, job: str = "worker", task: int = 0) -> str:
        return f"grpc://{self.spec[job][task]}"

    @property
    def cluster_json(self) -> str:
        return json.dumps(self.spec)

    # -- processes ------------------------------------------------------------------------
    def _spawn(self, job: str, task: int) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "tensorweave.distributed.server_main",
               "--cluster", self.cluster_json, "--job", job, "--task", str(task),
               "--cpus", str(self._cpus), *self._extra]
        # NOTE: stderr goes to a file, not a pipe nobody drains (a full pipe blocks a task).
        log = tempfile.TemporaryFile()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        proc.log = log
        return proc

    def kill(self, job: str, task: int) -> None:
        """SIGKILLs a task (a crash: no cleanup on its side) and reaps it."""
        proc = self.procs[(job, task)]
        proc.kill()
        proc.wait(STOP_GRACE_S)
        _close_pipes(proc)

    def restart(self, job: str, task: int) -> None:
        """Starts a killed or stopped task again on its address (a new incarnation)."""
        old = self.procs[(job, task)]
        if old.poll() is None:
            raise RuntimeError(f"/job:{job}/task:{task} is still running")
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:  # NOTE: the old socket may linger for a moment after a kill
            proc = self.procs[(job, task)] = self._spawn(job, task)
            try:
                _wait_serving(proc, (job, task))
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        """Stops every task (SIGTERM to all at once, SIGKILL to those still running
        STOP_GRACE_S later: the whole stop is bounded) and reaps it."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in self.procs.values():
            stop_process(proc, max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def read_target(proc: subprocess.Popen, timeout: float = START_TIMEOUT_S) -> str | None:
    """The target a server process prints first ("target grpc://..."), or None when its
    first line says otherwise or does not come within `timeout`."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    text = line[0].strip() if line else ""
    return text.split(" ", 1)[1] if text.startswith("target grpc://") else None


def stop_process(proc: subprocess.Popen, grace: float = STOP_GRACE_S) -> int:
    """Terminates `proc` (SIGKILL after `grace` s), reaps it, closes its pipes; its status."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    _close_pipes(proc)
    return proc.returncode


def _wait_serving(proc: subprocess.Popen, key) -> None:
    """Waits for the task's target line. Raises RuntimeError (with its stderr) otherwise."""
    if read_target(proc) is None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.log.seek(0)
        err = proc.log.read().decode(errors="replace")
        _close_pipes(proc)
        raise RuntimeError(f"task /job:{key[0]}/task:{key[1]} did not start: "
                           f"{err.strip()[-2000:]}")


def _close_pipes(proc: subprocess.Popen) -> None:
    for f in (proc.stdout, proc.stderr, getattr(proc, "log", None)):
        if f is not None and not f.closed:
            f.close()


__all__ = ["LocalCluster", "free_ports", "read_target", "stop_process"]
