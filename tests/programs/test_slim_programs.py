"""Real TF-Slim programs run unchanged on tensorweave (`tensorflow.contrib.slim`):

- the MLP section of tensorflow/models' research/slim/slim_walkthrough.ipynb
  (slim/slim_walkthrough_mlp.py): arg_scope'd fully_connected + dropout, slim.losses,
  slim.learning.create_train_op / train for 5000 steps with summaries and checkpoints in
  /tmp/regression_model/, a Supervisor restore, slim.metrics + slim.evaluation.

Each runs in a subprocess (slim/run_program.py injects tensorweave as `tensorflow`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SLIM = Path(__file__).resolve().parent / "slim"


@pytest.mark.slow
def test_slim_walkthrough_mlp_trains_restores_and_evaluates():
    shutil.rmtree("/tmp/regression_model", ignore_errors=True)   # the program's own logdir
    proc = subprocess.run([sys.executable, str(SLIM / "run_program.py"),
                           str(SLIM / "slim_walkthrough_mlp.py")],
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "name = deep_regression/fc1/weights:0, shape = (1, 32)" in out
    assert "name = deep_regression/prediction/biases:0, shape = (1,)" in out
    logged = [float(v) for v in re.findall(r"global step \d+: loss = ([\d.]+)", out)]
    assert len(logged) == 10 and logged[-1] < 0.5 * logged[0], logged
    final = float(re.search(r"Last batch loss: ([\d.]+)", out).group(1))
    assert final < 0.3                    # noise variance 0.09 plus the L2 terms
    assert "Restoring parameters from /tmp/regression_model/model.ckpt-5000" in out
    mse = float(re.search(r"Mean Squared Error: ([\d.]+)", out).group(1))
    mae = float(re.search(r"Mean Absolute Error: ([\d.]+)", out).group(1))
    assert mse < 0.2 and mae < 0.4       # a constant predictor scores MSE ~0.6
