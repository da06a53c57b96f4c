"""TensorFlow's own partitioned-variable checkpoint test (partitioned/, source named in its
header) runs on tensorweave, injected as `tensorflow`, in a subprocess: a checkpoint of a
5-part variable restored by `init_from_checkpoint` into another partitioning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "partitioned"

_MAIN = """
import sys, runpy, tensorweave
sys.modules["tensorflow"] = tensorweave
path = sys.argv[1]
sys.argv = [path]
runpy.run_path(path, run_name="__main__")
"""


def test_tf_checkpoint_utils_partitioned_cases_pass():
    out = subprocess.run([sys.executable, "-c", _MAIN,
                          str(HERE / "checkpoint_utils_partitioned_test.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert "[       OK ] CheckpointsTest.testInitFromPartitionVar" in out.stderr + out.stdout
