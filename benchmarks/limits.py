"""Loads the benchmark puts its children under: a busy neighbour process, and a 1-CPU limit.

`one_cpu()` is a context manager yielding a `Limit`: a child started with `limit.preexec`
runs inside a cgroup of its own limited to one CPU of time per period (cgroup v2 `cpu.max`,
or v1 `cpu.cfs_quota_us`, in a sub-cgroup of ours created for the run and removed after it),
where the machine lets us create one (root in a container usually may); otherwise it is
pinned with `sched_setaffinity` to one core while two busy neighbour processes run.
`limit.text` says which was used.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000
BUSY_LOOP = "while True: pass"


@contextlib.contextmanager
def busy_neighbours(n: int = 1):
    """n busy processes (Python loops) for the duration of the block."""
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(n)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait(timeout=30)


@dataclass
class Limit:
    text: str
    preexec: object  # a callable for subprocess's preexec_fn


def _own_cgroup_dirs() -> list[tuple[Path, str]]:
    """(directory of our cgroup on a hierarchy with the cpu controller, 'v1' or 'v2')."""
    out = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        rel = path.strip("/")
        if controllers == "":
            for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
                ctl = mount / "cgroup.controllers"
                if ctl.exists() and "cpu" in ctl.read_text().split():
                    out.append((mount / rel, "v2"))
        elif "cpu" in controllers.split(","):
            for name in (controllers, "cpu", "cpu,cpuacct"):
                if (CGROUP_ROOT / name / "cpu.cfs_quota_us").exists():
                    out.append((CGROUP_ROOT / name / rel, "v1"))
                    break
    return out


def _make_cgroup() -> tuple[Path, str] | None:
    """A new sub-cgroup limited to one CPU, or None where none can be made."""
    for parent, kind in _own_cgroup_dirs():
        child = parent / f"tw-bench-{os.getpid()}"
        try:
            child.mkdir()
        except OSError:
            continue
        try:
            if kind == "v2":
                (child / "cpu.max").write_text(f"{PERIOD_US} {PERIOD_US}\n")
            else:
                (child / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
                (child / "cpu.cfs_quota_us").write_text(f"{PERIOD_US}\n")
            return child, kind
        except OSError:
            _remove(child)
    return None


def _remove(directory: Path) -> None:
    """rmdir, retried while the cgroup's last processes are still exiting (up to 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            directory.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.1)


@contextlib.contextmanager
def one_cpu():
    made = _make_cgroup()
    if made is not None:
        directory, kind = made
        procs = directory / "cgroup.procs"
        name = "cpu.max" if kind == "v2" else "cpu.cfs_quota_us"

        def join():
            procs.write_text(f"{os.getpid()}\n")

        try:
            yield Limit(f"a cgroup {kind} of its own, `{name}` = 1 CPU "
                        f"({PERIOD_US} µs per {PERIOD_US} µs)", join)
        finally:
            _remove(directory)
        return
    core = min(os.sched_getaffinity(0))
    with busy_neighbours(2):
        yield Limit(f"no cgroup could be made here: pinned to core {core} "
                    "(sched_setaffinity) with two busy neighbour processes",
                    lambda: os.sched_setaffinity(0, {core}))
