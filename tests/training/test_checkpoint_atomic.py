"""A save that replaces a checkpoint commits at one instant (training/checkpoint/commit.py).

A kill before any step of a save leaves the previous checkpoint or the new one whole (never
new data under the old index), and the next save removes what the killed one left. Real
TensorFlow reads both layouts a prefix alternates between.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tensorweave.formats.checkpoint import BundleReader, BundleWriter, commit

HERE = Path(__file__).resolve().parent


def _write(prefix, **tensors):
    with BundleWriter(prefix) as w:
        for name, value in tensors.items():
            w.add(name, value)


def _data_files(directory, base="m"):
    return sorted(f for f in os.listdir(directory) if f.startswith(f"{base}.data-"))


def test_saving_twice_alternates_layouts_and_keeps_no_old_data(tmp_path):
    prefix = str(tmp_path / "m")
    _write(prefix, w=np.float32([1]))
    assert _data_files(tmp_path) == ["m.data-00000-of-00001"]
    _write(prefix, w=np.float32([2]))
    assert _data_files(tmp_path) == ["m.data-00000-of-00002", "m.data-00001-of-00002"]
    assert os.path.getsize(tmp_path / "m.data-00001-of-00002") == 0
    with BundleReader(prefix) as r:
        assert r.num_shards == 2 and r.get_tensor("w").tolist() == [2]
    _write(prefix, w=np.float32([3]))
    assert _data_files(tmp_path) == ["m.data-00000-of-00001"]
    assert sorted(os.listdir(tmp_path)) == ["m.data-00000-of-00001", "m.index"]


def test_a_reader_opened_before_a_save_keeps_its_generation(tmp_path):
    prefix = str(tmp_path / "m")
    _write(prefix, w=np.arange(4, dtype=np.int32))
    reader = BundleReader(prefix)
    _write(prefix, w=np.arange(4, dtype=np.int32) * 10)
    assert reader.get_tensor("w").tolist() == [0, 1, 2, 3]
    reader.close()
    with BundleReader(prefix) as r:
        assert r.get_tensor("w").tolist() == [0, 10, 20, 30]


@pytest.mark.multiprocess
@pytest.mark.parametrize("op", ["write", "merge"])
@pytest.mark.parametrize("base", [1, 2])
def test_kill_before_every_step_leaves_old_or_new_whole(tmp_path, op, base):
    done = subprocess.run([sys.executable, str(HERE / "ckpt_kill_driver.py"), str(tmp_path),
                           op, str(base)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    orphans, runs = lines[0]["orphans"], lines[1:]
    assert runs[-1]["exit"] == 0 and all(r["exit"] == 99 for r in runs[:-1])
    held = [r["held"] for r in runs]
    assert set(held) <= {"old", "new"}, held
    # NOTE: old up to the commit, new from it on: exactly one switch, at the index rename
    switch = held.index("new")
    assert held[:switch] == ["old"] * switch and set(held[switch:]) == {"new"}
    assert switch >= 3, held  # several steps (temporaries, data rename) come before it
    for r in runs:
        left = r["after"]
        n = 1 if "m.data-00000-of-00001" in left else 2
        if op == "merge":
            n = next(int(f[-5:]) for f in left if f.startswith("m.data-"))
        want = sorted(["m.index", orphans["live"]] +
                      [f"m.data-{i:05d}-of-{n:05d}" for i in range(n)])
        assert left == want, (r["k"], r["after"])


def test_sweep_keeps_live_and_foreign_temporaries(tmp_path):
    keep = [f"x.index.tempstate-{commit._HOST}-{os.getpid()}-{1:016x}",
            f"x.index.tempstate-otherhost-1-{2:016x}",
            "other.index.tempstate77"]
    for name in keep:
        (tmp_path / name).write_bytes(b"")
    commit.sweep(str(tmp_path / "m"))
    assert sorted(os.listdir(tmp_path)) == sorted(keep)


@pytest.mark.slow
def test_tensorflow_reads_both_layouts(tmp_path, tf_peer):
    prefixes = []
    for saves in (1, 2):
        prefix = str(tmp_path / f"m{saves}")
        for gen in range(saves):
            _write(prefix, w=np.arange(6, dtype=np.float32).reshape(2, 3) + gen,
                   s=np.array([b"x%d" % gen], dtype=object))
        prefixes.append(prefix)
    code = ("import sys, json, tensorflow as tf\n"
            "out = []\n"
            "for p in sys.argv[1:]:\n"
            "    r = tf.train.load_checkpoint(p)\n"
            "    out.append([r.get_tensor('w').tolist(), r.get_tensor('s').tolist()[0].decode()])\n"
            "print(json.dumps(out))\n")
    done = subprocess.run([tf_peer, "-c", code, *prefixes], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got[0] == [[[0, 1, 2], [3, 4, 5]], "x0"]
    assert got[1] == [[[1, 2, 3], [4, 5, 6]], "x1"]
