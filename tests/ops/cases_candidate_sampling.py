"""Candidate samplers in the harness: static vs runtime shape and dtype; values for the
deterministic AllCandidateSampler and ComputeAccidentalHits (TF's numbers: test_sampled.py)."""

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_TRUE = np.array([[1, 3], [0, 7], [5, 5]], np.int64)
_ATTRS = {"num_true": 2, "num_sampled": 4, "unique": True, "seed": 1, "seed2": 2}


def _sampler(op_type, **extra):
    return lambda t: apply_op(op_type, t, **_ATTRS, **extra)


def _all_ref(t):
    return [np.arange(4), np.ones(t.shape, np.float32), np.ones(4, np.float32)]


def _hits_ref(t, s):
    pos = {int(v): i for i, v in enumerate(s)}
    hits = [(i, pos[v]) for i, row in enumerate(t.tolist()) for v in row if v in pos]
    return [np.array([h[0] for h in hits], np.int32), np.array([h[1] for h in hits], np.int64),
            np.full(len(hits), -np.finfo(np.float32).max, np.float32)]


CASES = [
    OpCase(op, _sampler(op, range_max=10), [_TRUE], None)
    for op in ("UniformCandidateSampler", "LogUniformCandidateSampler",
               "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler")
] + [
    OpCase("FixedUnigramCandidateSampler",
           _sampler("FixedUnigramCandidateSampler", range_max=8,
                    unigrams=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], distortion=0.75),
           [_TRUE], None),
    OpCase("AllCandidateSampler",
           lambda t: apply_op("AllCandidateSampler", t, num_true=2, num_sampled=4, unique=False),
           [np.array([[1, 3], [0, 2]], np.int64)], _all_ref),
    OpCase("ComputeAccidentalHits",
           lambda t, s: apply_op("ComputeAccidentalHits", t, s, num_true=2),
           [_TRUE, np.array([3, 5, 9, 0], np.int64)], _hits_ref, exact_static_shape=False),
]

EXEMPT: dict = {}
