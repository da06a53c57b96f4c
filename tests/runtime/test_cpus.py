"""CPUs a process may use: affinity capped by cgroup v1/v2 quotas, on fake and real cgroups."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tensorweave.runtime.kernels.cpu import cpus


def _tree(tmp_path: Path, files: dict[str, str], proc: str) -> tuple[Path, Path]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "proc").write_text(proc)
    return tmp_path, tmp_path / "proc"


def test_v2_cpu_max_of_the_process_cgroup(tmp_path):
    root, proc = _tree(tmp_path, {"kubepods/pod1/cpu.max": "150000 100000\n"},
                       "0::/kubepods/pod1\n")
    assert cpus.quota_cpus(root, proc) == 1.5


def test_v2_unlimited_and_an_ancestor_limit(tmp_path):
    root, proc = _tree(tmp_path, {"a/cpu.max": "50000 100000\n", "a/b/cpu.max": "max 100000\n"},
                       "0::/a/b\n")
    assert cpus.quota_cpus(root, proc) == 0.5          # the parent's limit applies


def test_v1_cfs_quota_and_no_limit(tmp_path):
    root, proc = _tree(tmp_path, {"cpu,cpuacct/docker/x/cpu.cfs_quota_us": "200000\n",
                                  "cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000\n",
                                  "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
                                  "cpu,cpuacct/cpu.cfs_period_us": "100000\n"},
                       "4:memory:/docker/x\n3:cpu,cpuacct:/docker/x\n")
    assert cpus.quota_cpus(root, proc) == 2.0
    root, proc = _tree(tmp_path / "none", {"cpu/cpu.cfs_quota_us": "-1\n",
                                           "cpu/cpu.cfs_period_us": "100000\n"}, "1:cpu:/\n")
    assert cpus.quota_cpus(root, proc) is None


def test_unreadable_files_mean_no_limit(tmp_path):
    assert cpus.quota_cpus(tmp_path, tmp_path / "missing") is None


def test_cpu_count_rounds_the_quota_up_and_never_exceeds_affinity(monkeypatch):
    monkeypatch.setattr(cpus, "affinity_count", lambda: 8)
    monkeypatch.setattr(cpus, "quota_cpus", lambda: 1.5)
    assert cpus.cpu_count() == 2
    monkeypatch.setattr(cpus, "quota_cpus", lambda: 0.2)
    assert cpus.cpu_count() == 1
    monkeypatch.setattr(cpus, "quota_cpus", lambda: 64.0)
    assert cpus.cpu_count() == 8
    monkeypatch.setattr(cpus, "quota_cpus", lambda: None)
    assert cpus.cpu_count() == 8


@pytest.mark.multiprocess
def test_a_process_in_a_real_one_cpu_cgroup_sizes_its_threads_to_it():
    """A child moved into a cgroup v1 cpu controller limited to 1 CPU (root only)."""
    base = Path("/sys/fs/cgroup/cpu")
    group = base / f"tensorweave-test-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text("100000")
    except OSError as e:
        pytest.skip(f"cannot create a cgroup v1 cpu group here: {e}")
    try:
        code = ("import sys; from pathlib import Path; "
                f"Path('{group}/cgroup.procs').write_text(str(__import__('os').getpid())); "
                "from tensorweave.runtime.kernels.cpu import parallel; "
                "print(parallel.DEFAULT_THREADS)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "1"
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            (base / "cgroup.procs").write_text(pid)
        os.rmdir(group)
