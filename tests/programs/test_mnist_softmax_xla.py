"""tensorflow/tensorflow's tensorflow/examples/tutorials/mnist/mnist_softmax_xla.py (the
"Simple MNIST classifier example with JIT XLA and timelines"), kept unchanged in
mnist_softmax_xla.py, runs with `global_jit_level=ON_1` (its default `--xla`) and with
`--no-xla` on the digits stand-in for MNIST (mnist_standin.py), writing its Chrome trace.

With jax installed the master's mark_for_compilation pass runs on its graph; without it the
level is accepted and does nothing, as TF without XLA: the program runs either way. Its
weights start at zero and the batches come in the same order, so both runs learn the same
model: accuracies agree within one test image of float rounding.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

_PROGRAM = """
import sys, runpy, types, tensorweave
sys.modules["tensorflow"] = tensorweave
for name in ("tensorflow.python", "tensorflow.python.client"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["tensorflow.python.client"].timeline = tensorweave.timeline
sys.modules["tensorflow.python.client.timeline"] = tensorweave.timeline
sys.path.insert(0, sys.argv[1])
import mnist_standin
mnist_standin.install(tensorweave)
path = sys.argv[2]
sys.argv = [path] + sys.argv[3:]
runpy.run_path(path, run_name="__main__")
"""


def _accuracy(tmp_path: Path, flag: str) -> float:
    cwd = tmp_path / flag.strip("-")
    cwd.mkdir()
    r = subprocess.run([sys.executable, "-c", _PROGRAM, str(HERE),
                        str(HERE / "mnist_softmax_xla.py"), flag, f"--data_dir={cwd}"],
                       capture_output=True, text=True, timeout=600, cwd=cwd)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    trace = json.loads((cwd / "timeline.ctf.json").read_text())
    assert any(e.get("ph") == "X" for e in trace["traceEvents"])
    return float(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_mnist_softmax_xla_trains_with_and_without_jit(tmp_path):
    with_jit = _accuracy(tmp_path, "--xla")
    without = _accuracy(tmp_path, "--no-xla")
    # 250 test digits, 10 classes (a guess scores 0.1); 1000 steps of softmax regression on
    # the stand-in's 1297 training digits fit them well above 0.8.
    assert with_jit > 0.8 and without > 0.8
    assert abs(with_jit - without) <= 1 / 250 + 1e-6
