"""How many CPUs this process may really use: its affinity mask, capped by its cgroup's quota.

A container with a CPU limit (Kubernetes `resources.limits.cpu`, `docker run --cpus`) still
shows every core of the host in `os.cpu_count()` and often in the affinity mask too; the
limit is a CFS quota on the process's cgroup. Threads beyond the quota do not run faster:
they are throttled together, and a thread that waits for another (a crew hand-off, a BLAS
spinner) then waits for the scheduler's next period. So the kernels size their threads by
`cpu_count()`, which reads:
- the affinity mask (`os.sched_getaffinity`; `taskset`, cpusets);
- cgroup v2 `cpu.max` ("QUOTA PERIOD", or "max PERIOD" for none), and cgroup v1
  `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1 for none), of the process's cgroup and every
  ancestor (a limit set on a parent applies to its children); the smallest applies, rounded
  up to whole CPUs.
Unreadable files count as no limit.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def affinity_count() -> int:
    """CPUs in this process's affinity mask (os.cpu_count() where there is none)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # NOTE: not on Linux
        return os.cpu_count() or 1


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _v2_limit(directory: Path) -> float | None:
    text = _read(directory / "cpu.max")
    if not text:
        return None
    quota, _, period = text.partition(" ")
    if quota == "max" or not period:
        return None
    return int(quota) / int(period)


def _v1_limit(directory: Path) -> float | None:
    quota, period = _read(directory / "cpu.cfs_quota_us"), _read(directory / "cpu.cfs_period_us")
    if quota is None or period is None or int(quota) < 0 or int(period) <= 0:
        return None
    return int(quota) / int(period)


def _ancestors(mount: Path, path: str):
    """mount/path, its parents, up to mount itself."""
    here = mount / path.strip("/")
    while True:
        yield here
        if here == mount or mount not in here.parents:
            return
        here = here.parent


def _cgroup_dirs(root: Path, proc_cgroup: Path):
    """(directory, reader) for every cgroup directory whose CPU limit applies to us."""
    for line in (_read(proc_cgroup) or "").splitlines():
        _id, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            for mount in (root, root / "unified"):
                yield from ((d, _v2_limit) for d in _ancestors(mount, path))
        elif "cpu" in controllers.split(","):
            for name in (controllers, "cpu", "cpu,cpuacct"):
                yield from ((d, _v1_limit) for d in _ancestors(root / name, path))


def quota_cpus(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """The CPU time (in CPUs) our cgroups allow, the smallest limit found; None: unlimited."""
    limits = [v for d, read in _cgroup_dirs(root, proc_cgroup) if (v := read(d)) is not None]
    return min(limits) if limits else None


def cpu_count() -> int:
    """CPUs this process may use: the affinity mask, capped by the cgroup quota (rounded up)."""
    n = affinity_count()
    quota = quota_cpus()
    return max(1, min(n, math.ceil(quota))) if quota else n
