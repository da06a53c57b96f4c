"""A real freeze pipeline, run unchanged: metaflow-ai/blog's tf-freeze programs (train and
checkpoint `tiny_model.py`, freeze with `freeze.py`, load the frozen graph and predict with
`load.py`). Each runs in a subprocess with `tensorweave` injected as `tensorflow` (and its
`graph_util` as `tensorflow.python.framework.graph_util`, which freeze.py imports). The same
load.py then runs under TensorFlow (the peer, `tf.compat.v1` as `tensorflow`) on our frozen
file. The data is the programs' own (random, generated in tiny_model.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "metaflow_freeze"
pytestmark = pytest.mark.slow

_RUNNER = """
import sys, types, tensorweave
sys.modules['tensorflow'] = tensorweave
for name in ('tensorflow.python', 'tensorflow.python.framework'):
    sys.modules[name] = types.ModuleType(name)
sys.modules['tensorflow.python.framework'].graph_util = tensorweave.graph_util
sys.modules['tensorflow.python.framework.graph_util'] = tensorweave.graph_util
path = sys.argv[1]
sys.argv = sys.argv[1:]
exec(compile(open(path).read(), path, 'exec'), {'__name__': '__main__', '__file__': path})
"""

_TF_RUNNER = """
import sys, tensorflow as tf
tf.compat.v1.disable_v2_behavior()
sys.modules['tensorflow'] = tf.compat.v1
path = sys.argv[1]
sys.argv = sys.argv[1:]
exec(compile(open(path).read(), path, 'exec'), {'__name__': '__main__', '__file__': path})
"""


def _run(python: str, runner: str, program: str, args: list[str], cwd: Path) -> str:
    proc = subprocess.run([python, "-c", runner, str(HERE / program), *args],
                          capture_output=True, text=True, timeout=600, cwd=cwd)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    return proc.stdout


@pytest.fixture(scope="module")
def frozen(tmp_path_factory):
    work = tmp_path_factory.mktemp("freeze")
    out = _run(sys.executable, _RUNNER, "tiny_model.py", [], work)
    final = float(re.search(r"final accuracy: ([0-9.]+)", out).group(1))
    out = _run(sys.executable, _RUNNER, "freeze.py", ["--model_folder", "results"], work)
    n_ops = int(re.search(r"(\d+) ops in the final graph", out).group(1))
    assert (work / "results" / "frozen_model.pb").exists()
    return work, final, n_ops


def test_train_freeze_load_runs_here(frozen):
    work, final, n_ops = frozen
    assert final >= 0.8          # the labels are learnable: sum of ten digits > 45
    assert 10 < n_ops < 40       # the prediction path only: no Adam slots, no Saver
    out = _run(sys.executable, _RUNNER, "load.py", [], work)
    assert "prefix/Accuracy/predictions" in out and "Adam" not in out
    assert out.strip().endswith("[[False]]")


def test_tensorflow_loads_our_frozen_graph(frozen, tf_peer):
    work, _, _ = frozen
    out = _run(tf_peer, _TF_RUNNER, "load.py", [], work)
    assert out.strip().endswith("[[False]]")
