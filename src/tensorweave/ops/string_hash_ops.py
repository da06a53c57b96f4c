"""String hashing and crossing ops (TF's `string_ops.cc`, `sparse_ops.cc`): the hash buckets
behind feature columns and `tf.lookup`'s out-of-vocabulary buckets, and `SparseCross`.

Hashes equal TensorFlow's bit for bit (`runtime/kernels/cpu/fingerprint.py`), so bucket ids,
and with them trained embeddings and checkpoints, agree with TF's.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import TensorShape

OP_TYPES: list[str] = []


def _same_shape(ctx):
    return ctx.input_shape(0)


def _cross_shape(ctx):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, **kw)


_register("StringToHashBucketFast", inputs=["input: string"], outputs=["output: int64"],
          attrs=["num_buckets: int >= 1"], shape_fn=_same_shape)
_register("StringToHashBucketStrong", inputs=["input: string"], outputs=["output: int64"],
          attrs=["num_buckets: int >= 1", "key: list(int)"], shape_fn=_same_shape)
_register("StringToHashBucket", inputs=["string_tensor: string"], outputs=["output: int64"],
          attrs=["num_buckets: int >= 1"], shape_fn=_same_shape)
_register("SparseCross",
          inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
                  "dense_inputs: dense_types"],
          outputs=["output_indices: int64", "output_values: out_type", "output_shape: int64"],
          attrs=["N: int >= 0", "hashed_output: bool", "num_buckets: int >= 0", "hash_key: int",
                 "sparse_types: list(type) >= 0", "dense_types: list(type) >= 0",
                 "out_type: {int64, string}", "internal_type: {int64, string}"],
          shape_fn=_cross_shape)


# -- wrappers (tf.strings.*, tf.string_to_hash_bucket*, tf.sparse.cross*) ---------------------
def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 - TF's name
    """FarmHash Fingerprint64 of each string, modulo `num_buckets` (int64, same shape)."""
    return apply_op("StringToHashBucketFast", input, num_buckets=num_buckets, name=name)


def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """SipHash-2-4 under the two-int `key`, modulo `num_buckets`."""
    return apply_op("StringToHashBucketStrong", input, num_buckets=num_buckets,
                    key=list(key), name=name)


def string_to_hash_bucket(string_tensor, num_buckets, name=None):
    """The legacy hash (TF's Hash64), modulo `num_buckets`; prefer the fast one."""
    return apply_op("StringToHashBucket", string_tensor, num_buckets=num_buckets, name=name)


_DEFAULT_HASH_KEY = 0xDECAFCAFFE


def _cross(inputs, hashed_output, num_buckets=0, hash_key=None, name=None) -> SparseTensor:
    sparse = [x for x in inputs if isinstance(x, SparseTensor)]
    dense = [convert_to_tensor(x) for x in inputs if not isinstance(x, SparseTensor)]
    for t in [s.values for s in sparse] + dense:
        if t.dtype not in (dtypes.int64, dtypes.int32, dtypes.string):
            raise TypeError(f"SparseCross inputs must be int64, int32 or string, got {t.dtype}")
    cast = _int64_or_string
    out_type = dtypes.int64 if hashed_output else dtypes.string
    idx, vals, shape = apply_op(
        "SparseCross", [s.indices for s in sparse], [cast(s.values) for s in sparse],
        [s.dense_shape for s in sparse], [cast(d) for d in dense],
        hashed_output=hashed_output, num_buckets=num_buckets,
        hash_key=_DEFAULT_HASH_KEY if hash_key is None else hash_key,
        out_type=out_type, internal_type=out_type if hashed_output else dtypes.string,
        name=name)
    return SparseTensor(idx, vals, shape)


def _int64_or_string(t):
    from tensorweave.ops.math_ops import cast
    return cast(t, dtypes.int64) if t.dtype == dtypes.int32 else t


def sparse_cross(inputs, name=None) -> SparseTensor:
    """Crosses of the rows of `inputs` (SparseTensors and 2-D Tensors) as `a_X_b` strings."""
    return _cross(inputs, False, name=name)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None) -> SparseTensor:
    """Crosses as chained fingerprints (`FingerprintCat64`), modulo `num_buckets` when > 0."""
    return _cross(inputs, True, num_buckets, hash_key, name)


__all__ = ["sparse_cross", "sparse_cross_hashed", "string_to_hash_bucket",
           "string_to_hash_bucket_fast", "string_to_hash_bucket_strong"]
