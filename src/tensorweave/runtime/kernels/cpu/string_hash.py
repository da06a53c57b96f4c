"""CPU kernels of the string hash ops and `SparseCross` (`ops/string_hash_ops.py`).

The hashes are TF's (see `fingerprint.py`); a bucket is the unsigned hash modulo
`num_buckets`, as TF computes it.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.fingerprint import (
    M64,
    fingerprint64,
    fingerprint_cat64,
    legacy_hash64,
    siphash24,
)
from tensorweave.runtime.kernels.registry import register_kernel


def _bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


def _bucketize(hash_fn, num_buckets: int):
    def run(strings):
        a = np.asarray(strings, dtype=object)
        flat = [hash_fn(_bytes(s)) % num_buckets for s in a.reshape(-1)]
        return np.array(flat, dtype=np.int64).reshape(a.shape)
    return run


@register_kernel("StringToHashBucketFast")
def _fast(node):
    return _bucketize(fingerprint64, node.attr("num_buckets"))


@register_kernel("StringToHashBucket")
def _legacy(node):
    return _bucketize(legacy_hash64, node.attr("num_buckets"))


@register_kernel("StringToHashBucketStrong")
def _strong(node):
    key = node.attr("key")
    if len(key) != 2:
        raise errors.InvalidArgumentError(
            None, None, f"Key must have 2 elements, got {len(key)} (StringToHashBucketStrong)")
    k = (key[0] & M64, key[1] & M64)
    return _bucketize(lambda s: siphash24(k, s), node.attr("num_buckets"))


# -- SparseCross ------------------------------------------------------------------------------
def _column_rows(indices, values, dense_shape, batch: int) -> list[list]:
    """The values of each row of one 2-D sparse input, in index order."""
    rows: list[list] = [[] for _ in range(batch)]
    for (r, _), v in zip(np.asarray(indices).reshape(-1, 2), np.asarray(values).reshape(-1)):
        rows[int(r)].append(v)
    return rows


def _dense_rows(x) -> list[list]:
    a = np.asarray(x)
    if a.ndim != 2:
        raise errors.InvalidArgumentError(None, None, f"Dense inputs should be a matrix but "
                                          f"received shape {list(a.shape)}")
    return [list(row) for row in a]


def _feature_hash(v) -> int:
    # NOTE: TF's HashCrosser fingerprints strings and takes int64 values as they are.
    if isinstance(v, (bytes, str)):
        return fingerprint64(_bytes(v))
    return int(v) & M64


def _hash_cross(combo, hash_key: int, num_buckets: int) -> int:
    h = hash_key & M64
    for v in combo:
        h = fingerprint_cat64(h, _feature_hash(v))
    return h % num_buckets if num_buckets > 0 else h % ((1 << 63) - 1)


def _string_cross(combo) -> bytes:
    return b"_X_".join(_bytes(v) if isinstance(v, (bytes, str)) else str(int(v)).encode()
                       for v in combo)


def _batch_size(shapes, dense) -> int:
    sizes = {int(np.asarray(s)[0]) for s in shapes} | {int(np.asarray(d).shape[0]) for d in dense}
    if len(sizes) > 1:
        raise errors.InvalidArgumentError(None, None, f"Expected batch size {min(sizes)} "
                                          f"got {max(sizes)}")
    return sizes.pop() if sizes else 0


@register_kernel("SparseCross")
def _sparse_cross(node):
    n = node.attr("N")
    hashed, buckets, key = node.attr("hashed_output"), node.attr("num_buckets"), \
        node.attr("hash_key")

    def run(*args):
        idx, vals, shapes, dense = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:]
        batch = _batch_size(shapes, dense)
        columns = [_column_rows(i, v, s, batch) for i, v, s in zip(idx, vals, shapes)]
        columns += [_dense_rows(d) for d in dense]
        out_idx, out_vals, width = [], [], 0
        for b in range(batch):
            crosses = list(itertools.product(*(c[b] for c in columns))) if columns else []
            for j, combo in enumerate(crosses):
                out_idx.append((b, j))
                out_vals.append(_hash_cross(combo, key, buckets) if hashed
                                else _string_cross(combo))
            width = max(width, len(crosses))
        vals_arr = np.array(out_vals, dtype=np.int64 if hashed else object)
        return (np.array(out_idx, dtype=np.int64).reshape(-1, 2), vals_arr,
                np.array([batch, width], dtype=np.int64))
    return run
