"""Kills a checkpoint save before each of its file-system steps, and reports what survives.

Run by tests/training/test_checkpoint_atomic.py as `python ckpt_kill_driver.py DIR OP BASE`:
OP is `write` (BundleWriter) or `merge` (merge_bundles of two parts); BASE is how many saves
were made to the prefix before (1 or 2: the two layouts a prefix alternates between). For
k = 1, 2, ... a forked child repeats the save into a copy of the base directory and dies
(`os._exit`) just before its k-th file-system mutation (create, rename, link, remove); the
parent then reads the prefix back, saves once more without a kill, and prints one JSON line
per k: the child's exit code, what the prefix held ("old", "new" or the error), and the
directory's files after that next save. The loop ends with the first child that completes.
Forking (no threads are running here) keeps the whole run to one interpreter start.
"""

import builtins
import json
import os
import shutil
import subprocess
import sys

import numpy as np

from tensorweave.formats.checkpoint import bundle, commit

KILLED = 99
NAMES = ["a", "b", "c"]


def values(gen: int) -> dict:
    return {"a": np.arange(6, dtype=np.float32).reshape(2, 3) + gen,
            "b": np.array([gen, -gen], np.int64),
            "c": np.array([b"gen%d" % gen], dtype=object)}


def save(prefix: str, gen: int, op: str) -> None:
    vals = values(gen)
    if op == "write":
        with bundle.BundleWriter(prefix) as w:
            for name in NAMES:
                w.add(name, vals[name])
        return
    parts = [f"{prefix}_temp_{gen:032x}/part-{i:05d}-of-00002" for i in range(2)]
    for part, names in zip(parts, (NAMES[:1], NAMES[1:])):
        with bundle.BundleWriter(part) as w:
            for name in names:
                w.add(name, vals[name])
    bundle.merge_bundles(parts, prefix)


def held(prefix: str) -> str:
    try:
        with bundle.BundleReader(prefix) as r:
            got = {n: r.get_tensor(n) for n in NAMES}
    except Exception as e:  # noqa: BLE001 - reported to the test
        return f"{type(e).__name__}: {e}"
    for gen, label in ((1, "old"), (2, "new")):
        if all(np.array_equal(got[n], values(gen)[n]) for n in NAMES):
            return label
    return "mixed"


def die_before(k: int) -> None:
    """Makes the k-th file-system mutation of this process exit it instead."""
    count = [0]

    def guard(fn):
        def wrapped(*args, **kwargs):
            count[0] += 1
            if count[0] == k:
                os._exit(KILLED)
            return fn(*args, **kwargs)
        return wrapped

    for name in ("replace", "rename", "remove", "unlink", "link", "open"):
        setattr(os, name, guard(getattr(os, name)))
    real_open = builtins.open

    def open_(file, mode="r", *args, **kwargs):
        return (guard(real_open) if any(c in mode for c in "wax+") else real_open)(
            file, mode, *args, **kwargs)

    builtins.open = open_


def plant_orphans(directory: str) -> dict:
    """Leftovers of earlier killed saves: a dead writer's temporary, a TF-format temporary of
    the prefix, and a live writer's temporary of another prefix (this process's parent)."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = {
        "dead": f"m.index.tempstate-{commit._HOST}-{dead.pid}-{1:016x}",
        "tf": "m.data-00000-of-00001.tempstate123456",
        "live": f"other.index.tempstate-{commit._HOST}-{os.getpid()}-{2:016x}",
    }
    for name in names.values():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(b"partial")
    return names


def main(root: str, op: str, base: int) -> None:
    base_dir = os.path.join(root, "base")
    os.makedirs(base_dir)
    for _ in range(base):
        save(os.path.join(base_dir, "m"), 1, op)
    print(json.dumps({"orphans": plant_orphans(base_dir)}), flush=True)
    for k in range(1, 200):
        work = os.path.join(root, f"k{k}")
        shutil.copytree(base_dir, work)
        prefix = os.path.join(work, "m")
        pid = os.fork()
        if pid == 0:
            die_before(k)
            save(prefix, 2, op)
            os._exit(0)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        state = held(prefix)
        save(prefix, 3, op)
        print(json.dumps({"k": k, "exit": code, "held": state,
                          "after": sorted(os.listdir(work))}), flush=True)
        if code != KILLED:
            return


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
