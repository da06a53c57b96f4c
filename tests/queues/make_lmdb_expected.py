"""Writes tests/data/lmdb/data.mdb with the `lmdb` package (TensorFlow cannot write LMDB,
and TF 2.21's LMDBReader only raises "LMDB support is removed from TensorFlow", so there are
no TF numbers to take: test_lmdb_reader.py checks TF1's documented behaviour):

    .venv/bin/python tests/queues/make_lmdb_expected.py
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "data"
PATH = ROOT / "lmdb" / "data.mdb"


WRITTEN = (3, 1, 10, 7, 0)   # out of order: LMDB keeps keys sorted


def write():
    import lmdb

    PATH.parent.mkdir(parents=True, exist_ok=True)
    if PATH.exists():
        PATH.unlink()
    env = lmdb.open(str(PATH), subdir=False, map_size=1 << 20, lock=False)
    with env.begin(write=True) as txn:
        for i in WRITTEN:
            txn.put(f"key{i:02d}".encode(), bytes([i]) * (i + 1))
    env.close()
    lock = PATH.with_name("data.mdb-lock")
    if lock.exists():
        lock.unlink()


if __name__ == "__main__":
    write()
