"""Candidate sampling ops (TF's candidate_sampling_ops.cc) and their TF1 wrappers
`tf.nn.*_candidate_sampler` and `tf.nn.compute_accidental_hits`.

A sampler op takes `true_classes` (int64, [batch_size, num_true]) and returns
  sampled_candidates      int64 [num_sampled]  the drawn classes,
  true_expected_count     float [batch_size, num_true],
  sampled_expected_count  float [num_sampled],
the expected counts being how often each class is expected among the draws (TF's
`ExpectedCountHelper`: `p * num_sampled`, or `1 - (1 - p)**num_tries` when `unique` made the
op draw `num_tries` times to get `num_sampled` distinct classes). Every sampler is stateful
with TF's `seed`/`seed2` attrs, seeded by TF1's rules (`random_ops.get_seed`). None has a
gradient. Kernels: `runtime/kernels/cpu/candidate_sampling.py`.
"""

from __future__ import annotations

from collections import namedtuple

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.random_ops import get_seed
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_SAMPLER_OUTPUTS = ["sampled_candidates: int64", "true_expected_count: float",
                    "sampled_expected_count: float"]
_COMMON = ["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool"]
_SEEDS = ["seed: int = 0", "seed2: int = 0"]
_RANGE = ["range_max: int >= 1"]


# -- shape functions ---------------------------------------------------------------------------
def _true_classes(ctx) -> tuple:
    """true_classes' dims, checked to be a [batch, num_true] matrix."""
    dims = ctx.input_dims(0)
    if dims is None:
        return None, None
    if len(dims) != 2:
        raise ctx.fail(f"Shape must be rank 2 but is rank {len(dims)}")
    num_true = ctx.attr("num_true")
    if dims[1] is not None and dims[1] != num_true:
        raise ctx.fail(f"Dimension 1 in both shapes must be equal, but are {dims[1]} and "
                       f"{num_true}")
    return dims[0], num_true


def _sampler_shape(ctx):
    batch, _ = _true_classes(ctx)
    n = ctx.attr("num_sampled")
    return [TensorShape([n]), TensorShape([batch, ctx.attr("num_true")]), TensorShape([n])]


def _accidental_hits_shape(ctx):
    _true_classes(ctx)
    dims = ctx.input_dims(1)
    if dims is not None and len(dims) != 1:
        raise ctx.fail(f"Shape must be rank 1 but is rank {len(dims)}")
    return [TensorShape([None])] * 3


# -- registrations -----------------------------------------------------------------------------
for _name in ("UniformCandidateSampler", "LogUniformCandidateSampler",
              "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"):
    register_op(_name, inputs=["true_classes: int64"], outputs=_SAMPLER_OUTPUTS,
                attrs=_COMMON + _RANGE + _SEEDS, shape_fn=_sampler_shape, stateful=True)
register_op("FixedUnigramCandidateSampler", inputs=["true_classes: int64"],
            outputs=_SAMPLER_OUTPUTS,
            attrs=_COMMON + _RANGE + ["vocab_file: string = ''", "distortion: float = 1.0",
                                      "num_reserved_ids: int = 0",
                                      "num_shards: int >= 1 = 1", "shard: int >= 0 = 0",
                                      "unigrams: list(float) = []"] + _SEEDS,
            shape_fn=_sampler_shape, stateful=True)
register_op("AllCandidateSampler", inputs=["true_classes: int64"], outputs=_SAMPLER_OUTPUTS,
            attrs=_COMMON + _SEEDS, shape_fn=_sampler_shape, stateful=True)
register_op("ComputeAccidentalHits", inputs=["true_classes: int64", "sampled_candidates: int64"],
            outputs=["indices: int32", "ids: int64", "weights: float"],
            attrs=["num_true: int", "seed: int = 0", "seed2: int = 0"],
            shape_fn=_accidental_hits_shape)


# -- Python API (TF's candidate_sampling_ops.py) ------------------------------------------------
SampledValues = namedtuple("SampledValues", ["sampled_candidates", "true_expected_count",
                                             "sampled_expected_count"])


def _sample(op_type, true_classes, seed, name, **attrs):
    seed1, seed2 = get_seed(seed)
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    outs = apply_op(op_type, true_classes, seed=seed1, seed2=seed2, name=name, **attrs)
    return SampledValues(*outs)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    """Samples classes uniformly from [0, range_max) (UniformCandidateSampler)."""
    return _sample("UniformCandidateSampler", true_classes, seed, name, num_true=num_true,
                   num_sampled=num_sampled, unique=unique, range_max=range_max)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Samples classes from the Zipfian P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)
    (LogUniformCandidateSampler): class ids should be sorted by decreasing frequency."""
    return _sample("LogUniformCandidateSampler", true_classes, seed, name, num_true=num_true,
                   num_sampled=num_sampled, unique=unique, range_max=range_max)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """Samples classes by the counts of the true classes seen so far, every class starting
    at one (LearnedUnigramCandidateSampler; the counts live as long as the session)."""
    return _sample("LearnedUnigramCandidateSampler", true_classes, seed, name,
                   num_true=num_true, num_sampled=num_sampled, unique=unique,
                   range_max=range_max)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Samples classes by fixed weights raised to `distortion`, from `unigrams` or the last
    comma-separated field of each line of `vocab_file` (FixedUnigramCandidateSampler);
    `num_reserved_ids` leading ids get weight 0, `num_shards`/`shard` keep every
    num_shards-th id."""
    return _sample("FixedUnigramCandidateSampler", true_classes, seed, name,
                   num_true=num_true, num_sampled=num_sampled, unique=unique,
                   range_max=range_max, vocab_file=vocab_file, distortion=distortion,
                   num_reserved_ids=num_reserved_ids, num_shards=num_shards, shard=shard,
                   unigrams=[float(u) for u in unigrams])


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Returns every class 0..num_sampled-1, each with expected count 1 (for tests)."""
    return _sample("AllCandidateSampler", true_classes, seed, name, num_true=num_true,
                   num_sampled=num_sampled, unique=unique)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Where a sampled candidate equals one of its row's true classes: (row indices, positions
    in sampled_candidates, weights of -FLT_MAX) to add to the sampled logits."""
    seed1, seed2 = get_seed(seed)
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    return apply_op("ComputeAccidentalHits", true_classes, sampled_candidates,
                    num_true=num_true, seed=seed1, seed2=seed2, name=name)


__all__ = ["uniform_candidate_sampler", "log_uniform_candidate_sampler",
           "learned_unigram_candidate_sampler", "fixed_unigram_candidate_sampler",
           "all_candidate_sampler", "compute_accidental_hits"]
