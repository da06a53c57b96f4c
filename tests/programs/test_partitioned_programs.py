"""TensorFlow's own partitioned-variable tests (partitioned/, sources named in their headers)
run on tensorweave, injected as `tensorflow`, in a subprocess: checkpoint_utils_test's
checkpoint of a 5-part variable restored by `init_from_checkpoint` into another partitioning,
and saver_test's save/restore between whole variables, partitioners and slicings (list and
dict var lists)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "partitioned"

_MAIN = """
import sys, runpy, tensorweave
sys.modules["tensorflow"] = tensorweave
path = sys.argv[1]
sys.argv = [path]
runpy.run_path(path, run_name="__main__")
"""


@pytest.mark.parametrize("script, case", [
    ("checkpoint_utils_partitioned_test.py", "CheckpointsTest.testInitFromPartitionVar"),
    ("saver_partitioned_test.py", "SaveRestoreShardedTest.testPartitionedVariable"),
])
def test_tf_partitioned_variable_tests_pass(script, case):
    out = subprocess.run([sys.executable, "-c", _MAIN, str(HERE / script)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert f"[       OK ] {case}" in out.stderr + out.stdout
