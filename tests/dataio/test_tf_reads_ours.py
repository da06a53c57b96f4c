"""TensorFlow reads the TFRecord files and Examples we write (plain and GZIP).

Runs tests/dataio/make_tf_check.py with the TensorFlow peer Python (the tf_peer fixture:
skipped where it cannot import TensorFlow; set PEER_PYTHON to use another one).
"""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tensorweave.formats import example as ex
from tensorweave.formats.tfrecord import TFRecordWriter

SCRIPT = Path(__file__).resolve().parent / "make_tf_check.py"


def _examples():
    rng = np.random.default_rng(3)
    out = []
    for i in range(25):
        out.append({"x": rng.random(7).astype(np.float32).tolist(),
                    "y": [i, -i * 2**40],
                    "id": [f"rec-{i}".encode(), bytes([0, 255, i])]})
    return out


@pytest.mark.slow
@pytest.mark.parametrize("compression", ["", "GZIP"])
def test_tensorflow_reads_our_records(tmp_path, compression, tf_peer):
    path = tmp_path / "ours.tfrecord"
    rows = _examples()
    with TFRecordWriter(path, compression) as w:
        for row in rows:
            e = ex.Example(features=ex.Features(
                feature={k: ex.feature_of(v) for k, v in row.items()}))
            w.write(e.SerializeToString())
    cmd = [tf_peer, str(SCRIPT), str(path)] + ([compression] if compression else [])
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["count"] == len(rows)
    for want, seen, parsed in zip(rows, got["examples"], got["parsed"]):
        for key in ("examples", "parsed"):
            have = seen if key == "examples" else parsed
            assert have["x"] == pytest.approx(want["x"], rel=0, abs=0)
            assert have["y"] == want["y"]
            assert [s.encode("latin-1") for s in have["id"]] == want["id"]
