"""tensorflow/models' census wide & deep tutorial (tests/programs/wide_deep/wide_deep.py,
kept unchanged; source named in its header) runs with tensorweave injected as `tensorflow`
on a stand-in for the cleaned census CSVs (wide_deep/standin.py: 400 training rows, 200 test
rows): argparse + `tf.app.run(main, argv)`, `tf.data.TextLineDataset` / `decode_csv` input,
and a canned `DNNLinearCombinedClassifier` over vocabulary, hash-bucket, bucketized, crossed,
indicator and embedding columns, trained and evaluated three times.

TF 2.21 has no `tf.estimator`, so the check is the program's own report: every metric of
TF 1.15's binary-classifier head, the label statistics of the stand-in, and learning (three
runs of the unseeded program ended at AUC 0.72-0.76 and average loss 0.62-0.64, against 0.5
and ln 2 = 0.693 for a model that learned nothing).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

_RUN = """
import runpy, sys
import tensorweave
sys.modules["tensorflow"] = tensorweave
prog, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, prog)
import standin
train, test = standin.write(tmp + "/data")
sys.argv = [prog + "/wide_deep.py", "--model_dir", tmp + "/model", "--train_data",
            str(train), "--test_data", str(test), "--train_epochs", "6",
            "--epochs_per_eval", "2"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

HEAD_METRICS = {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                "average_loss", "global_step", "label/mean", "loss", "precision",
                "prediction/mean", "recall"}


def _results(stdout: str) -> list[dict]:
    blocks = stdout.split("Results at epoch")[1:]
    out = []
    for block in blocks:
        pairs = re.findall(r"^([a-z_/]+): ([-0-9.e]+)$", block, flags=re.M)
        out.append({k: float(v) for k, v in pairs})
    return out


@pytest.mark.slow
def test_wide_deep_trains_and_evaluates_on_the_stand_in(tmp_path):
    sys.path.insert(0, str(HERE / "wide_deep"))
    try:
        import standin
    finally:
        sys.path.pop(0)
    r = subprocess.run([sys.executable, "-c", _RUN, str(HERE / "wide_deep"), str(tmp_path)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    results = _results(r.stdout)
    assert len(results) == 3
    assert [res["global_step"] for res in results] == [20, 40, 60]   # 400 rows / 40 a batch
    positives = sum(row.endswith(",>50K") for row in standin.rows(200, 2)) / 200
    for res in results:
        assert set(res) == HEAD_METRICS
        assert res["label/mean"] == pytest.approx(positives, abs=1e-6)
        assert res["accuracy_baseline"] == pytest.approx(max(positives, 1 - positives), abs=1e-6)
        assert 0 <= res["auc"] <= 1 and 0 < res["prediction/mean"] < 1
    last = results[-1]
    assert last["auc"] > 0.6 and last["average_loss"] < math.log(2)
    assert last["accuracy"] > last["accuracy_baseline"]
    assert (tmp_path / "model" / "model.ckpt-60.index").exists()
