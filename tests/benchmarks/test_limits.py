"""The loads `make bench` runs its rows under (benchmarks/limits.py)."""

import os
import subprocess
import sys

import pytest

from benchmarks import limits

CHILD = ("import os; from tensorweave.runtime.kernels.cpu import cpus; "
         "print(len(os.sched_getaffinity(0)), cpus.cpu_count())")


def _child(preexec) -> list[int]:
    out = subprocess.run([sys.executable, "-c", CHILD], preexec_fn=preexec, capture_output=True,
                         text=True, timeout=120, check=True)
    return [int(v) for v in out.stdout.split()]


@pytest.mark.multiprocess
def test_without_a_cgroup_the_child_gets_one_core_and_two_neighbours(monkeypatch):
    monkeypatch.setattr(limits, "_make_cgroup", lambda: None)
    before = set(os.listdir("/proc"))
    with limits.one_cpu() as limit:
        assert "two busy neighbour" in limit.text
        assert _child(limit.preexec) == [1, 1]
        assert len(set(os.listdir("/proc")) - before) >= 2     # the neighbours run
    assert len(os.sched_getaffinity(0)) >= 1                    # ours untouched


@pytest.mark.multiprocess
def test_a_cgroup_limit_is_what_the_child_counts_where_one_can_be_made():
    if limits._own_cgroup_dirs() == []:
        pytest.skip("no cgroup hierarchy with the cpu controller here")
    with limits.one_cpu() as limit:
        if not limit.text.startswith("a cgroup"):
            pytest.skip(f"no cgroup could be made: {limit.text}")
        assert _child(limit.preexec)[1] == 1                     # cpus.py reads the quota
