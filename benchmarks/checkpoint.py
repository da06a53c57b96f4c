"""Checkpoint save/restore of ~1 GB of float32 variables vs plain numpy file I/O of the bytes.

Saver.save / Saver.restore of 16 variables of 16M float32 each (1 GiB) through a session,
against writing the same arrays to one file with `ndarray.tofile` and reading them back with
`np.fromfile` (and, as a stricter floor, `readinto` into fresh arrays). Both sides go through
the page cache (nothing is fsync'ed: TensorFlow does not sync checkpoints either) and
alternate, round by round, each round writing fresh files. Prints one JSON object; times are
the best of `--repeat` rounds.

    .venv/bin/python benchmarks/checkpoint.py [--mib 1024] [--vars 16] [--repeat 5] [--dir D]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np

import tensorweave as tf
from tensorweave.training.saver import Saver


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def numpy_write(arrays, path: str) -> None:
    with open(path, "wb") as f:
        for a in arrays:
            a.tofile(f)


def numpy_read(arrays, path: str) -> list:
    with open(path, "rb") as f:
        return [np.fromfile(f, np.float32, a.size) for a in arrays]


def readinto_read(arrays, path: str) -> list:
    """The fastest plain read: `readinto` fresh arrays (no numpy parsing, no extra copy)."""
    out = []
    with open(path, "rb", buffering=0) as f:
        for a in arrays:
            b = np.empty_like(a)
            f.readinto(memoryview(b.view(np.uint8)))
            out.append(b)
    return out


def measure(sess, saver, arrays, root: str, repeat: int) -> dict:
    """Best-of-`repeat` times; ours and numpy alternate, each round writes fresh files (as
    training does: a new step, a new file) which are deleted after the round. Dirty pages are
    flushed (untimed) before each step, so no step pays for another's writeback."""
    t: dict[str, list] = {"save": [], "restore": [], "write": [], "read": [], "readinto": []}
    for i in range(repeat):
        prefix, plain = os.path.join(root, f"model.ckpt-{i}"), os.path.join(root, f"plain{i}")
        steps = [("write", lambda p=plain: numpy_write(arrays, p)),
                 ("save", lambda p=prefix: saver.save(sess, p, write_meta_graph=False,
                                                      write_state=False)),
                 ("read", lambda p=plain: numpy_read(arrays, p)),
                 ("readinto", lambda p=plain: readinto_read(arrays, p)),
                 ("restore", lambda p=prefix: saver.restore(sess, p))]
        for key, fn in steps:
            os.sync()  # NOTE: each timed step starts with no dirty pages to write back
            t[key].append(timed(fn))
        for f in os.listdir(root):
            os.remove(os.path.join(root, f))
    return {k: min(v) for k, v in t.items()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mib", type=int, default=1024)
    p.add_argument("--vars", type=int, default=16)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--dir", default=None)
    args = p.parse_args()
    n = args.mib * (1 << 20) // 4 // args.vars
    root = tempfile.mkdtemp(prefix="tw_ckpt_bench_", dir=args.dir)
    try:
        variables = [tf.get_variable(f"layer_{i:02d}/kernel", [n], dtype=tf.float32,
                                     initializer=tf.zeros_initializer())
                     for i in range(args.vars)]
        saver = Saver(variables)
        rng = np.random.default_rng(0)
        arrays = [rng.random(n, dtype=np.float32) for _ in variables]
        with tf.Session() as sess:
            sess.run([v.initializer for v in variables])
            for v, a in zip(variables, arrays):
                v.load(a, sess)
            t = measure(sess, saver, arrays, root, args.repeat)
            ok = all(np.array_equal(sess.run(v), a) for v, a in zip(variables, arrays))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({
        "checkpoint_bytes": n * 4 * args.vars,
        "checkpoint_save_s": round(t["save"], 4),
        "checkpoint_restore_s": round(t["restore"], 4),
        "numpy_write_s": round(t["write"], 4),
        "numpy_read_s": round(t["read"], 4),
        "readinto_read_s": round(t["readinto"], 4),
        "save_ratio": round(t["save"] / t["write"], 3),
        "restore_ratio": round(t["restore"] / t["read"], 3),
        "restore_ratio_vs_readinto": round(t["restore"] / t["readinto"], 3),
        "restored_equal": ok,
    }))


if __name__ == "__main__":
    main()
