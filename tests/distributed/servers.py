"""Starting real server processes for tests: each is stopped (terminate + wait) at the end."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

START_TIMEOUT_S = 30.0


@contextlib.contextmanager
def server_process(*args: str, module: tuple = ("-m", "tensorweave.distributed.server_main")):
    """Runs `python -m tensorweave.distributed.server_main ARGS` (or `python *module ARGS`);
    yields (process, target).

    Stops the process in any case (SIGTERM, then SIGKILL after 5 s) and waits for it.
    """
    proc = subprocess.Popen([sys.executable, *module, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield proc, _read_target(proc)
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, timeout: float = 5.0) -> int:
    """Terminates `proc` and reaps it; returns its exit status."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()
    return proc.returncode


def _read_target(proc: subprocess.Popen) -> str:
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    text = line[0].strip() if line else ""
    if not text.startswith("target grpc://"):
        stop(proc)
        raise RuntimeError(f"server did not start: {text!r}; stderr: {proc.stderr.read()}")
    return text.split(" ", 1)[1]
