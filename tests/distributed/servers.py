"""Starting real server processes for tests: each is stopped (terminate + wait) at the end."""

from __future__ import annotations

import contextlib
import subprocess
import sys

from tensorweave.distributed.local_cluster import read_target, stop_process

START_TIMEOUT_S = 60.0  # NOTE: a loaded CI machine imports slowly; only a failure waits this long


@contextlib.contextmanager
def server_process(*args: str, module: tuple = ("-m", "tensorweave.distributed.server_main"),
                   preexec_fn=None):
    """Runs `python -m tensorweave.distributed.server_main ARGS` (or `python *module ARGS`);
    yields (process, target). `preexec_fn` runs in the child before it starts (e.g. limits).

    Stops the process in any case (SIGTERM, then SIGKILL after 5 s) and waits for it.
    """
    proc = subprocess.Popen([sys.executable, *module, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)
    try:
        yield proc, _read_target(proc)
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, timeout: float = 5.0) -> int:
    """Terminates `proc` and reaps it; returns its exit status."""
    return stop_process(proc, timeout)


def _read_target(proc: subprocess.Popen) -> str:
    target = read_target(proc, START_TIMEOUT_S)
    if target is None:
        proc.kill()
        err = proc.stderr.read()
        stop(proc)
        raise RuntimeError(f"server did not start; stderr: {err}")
    return target
