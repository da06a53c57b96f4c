"""CPU kernels for the candidate samplers and ComputeAccidentalHits (ops/candidate_sampling_ops.py).

Each sampler node owns a `_Sampler` (its distribution, its generator seeded from
`(seed, seed2)`, and for the learned unigram sampler the class counts), created once per
session in the device's resource container, as TF keeps the kernel (and so its RangeSampler)
for the session. Probabilities and expected counts are computed in float32 as TF's
RangeSampler does. Thread-safety: a sampler's draw and update run under its lock.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.registry import register_kernel

_CONTAINER = "__candidate_samplers"
_F32 = np.float32


class _Sampler:
    """A distribution over [0, range): `draw(rng, n)` ids, `probability(ids)` in float32."""

    def __init__(self, range_: int):
        self.range = range_
        self.lock = threading.Lock()

    def update(self, ids: np.ndarray) -> None:
        """Learns from the true classes of a step (only the learned unigram sampler does)."""


class _Uniform(_Sampler):
    def draw(self, rng, n):
        return rng.integers(0, self.range, size=n, dtype=np.int64)

    def probability(self, ids):
        return np.full(np.shape(ids), 1.0 / self.range, _F32)


class _LogUniform(_Sampler):
    def __init__(self, range_: int):
        super().__init__(range_)
        self.log_range = np.log1p(float(range_))

    def draw(self, rng, n):
        values = np.exp(rng.random(n) * self.log_range).astype(np.int64) - 1
        return values % self.range

    def probability(self, ids):
        ids = np.asarray(ids, np.float64)
        return (np.log((ids + 2.0) / (ids + 1.0)) / self.log_range).astype(_F32)


class _Weighted(_Sampler):
    """Draws ids in proportion to `weights` (float32, one per id)."""

    def __init__(self, weights: np.ndarray):
        super().__init__(len(weights))
        self.weights = weights
        self._cdf = None

    def draw(self, rng, n):
        if self._cdf is None:
            self._cdf = np.cumsum(self.weights, dtype=np.float64)
        points = rng.random(n) * self._cdf[-1]
        return np.minimum(np.searchsorted(self._cdf, points, side="right"),
                          self.range - 1).astype(np.int64)

    def probability(self, ids):
        ids = np.asarray(ids, np.int64)
        total = _F32(np.sum(self.weights, dtype=np.float64))
        inside = (ids >= 0) & (ids < self.range)
        w = self.weights[np.where(inside, ids, 0)].astype(_F32)
        return np.where(inside, w / total, _F32(0)).astype(_F32)


class _LearnedUnigram(_Weighted):
    """Every id starts with weight 1; each true class seen adds 1 (TF's UnigramSampler)."""

    def __init__(self, range_: int):
        super().__init__(np.ones(range_, np.float64))

    def update(self, ids):
        np.add.at(self.weights, np.asarray(ids, np.int64).reshape(-1), 1.0)
        self._cdf = None


class _All(_Sampler):
    def draw(self, rng, n):
        return np.arange(n, dtype=np.int64)

    def probability(self, ids):
        return np.ones(np.shape(ids), _F32)


# -- sampling a batch (TF's RangeSampler::SampleBatchGetExpectedCountAvoid) --------------------
def _draw_unique(sampler, rng, n: int) -> tuple[np.ndarray, int]:
    """`n` distinct ids in order of first draw, and how many draws that took."""
    picked: list[int] = []
    seen: set[int] = set()
    tries = 0
    while len(picked) < n:
        for value in sampler.draw(rng, max(2 * (n - len(picked)), 16)).tolist():
            tries += 1
            if value not in seen:
                seen.add(value)
                picked.append(value)
                if len(picked) == n:
                    break
    return np.array(picked, np.int64), tries


def _expected_count(p: np.ndarray, n: int, tries: int) -> np.ndarray:
    """p * n, or 1 - (1 - p)**tries when unique sampling took more than n draws."""
    if tries == n:
        return (p * _F32(n)).astype(_F32)
    return (-np.expm1(_F32(tries) * np.log1p(-p))).astype(_F32)


def _sample_batch(sampler, rng, node_attrs, true_classes):
    num_sampled, unique = node_attrs
    if isinstance(sampler, _All):
        sampled, tries = sampler.draw(rng, num_sampled), num_sampled
    elif unique:
        sampled, tries = _draw_unique(sampler, rng, num_sampled)
    else:
        sampled, tries = sampler.draw(rng, num_sampled), num_sampled
    true_count = _expected_count(sampler.probability(true_classes), num_sampled, tries)
    sampled_count = _expected_count(sampler.probability(sampled), num_sampled, tries)
    if isinstance(sampler, _All):
        true_count, sampled_count = np.ones_like(true_count), np.ones_like(sampled_count)
    return sampled, true_count, sampled_count


def _check_true_classes(true_classes, num_true: int, range_: int) -> np.ndarray:
    true_classes = np.asarray(true_classes, np.int64)
    if true_classes.ndim != 2:
        raise invalid("true_classes must be a matrix")
    if true_classes.shape[1] != num_true:
        raise invalid(f"true_classes must have num_true columns, expected: "
                      f"{true_classes.shape[1]} was: {num_true}")
    bad = (true_classes < 0) | (true_classes >= range_)
    if bad.any():
        raise invalid(f"`true_candidate` out of range [0, {range_}), received "
                      f"{int(true_classes[bad][0])}")
    return true_classes


def _sampler_kernel(make_sampler):
    """A kernel factory: `make_sampler(node)` builds the node's distribution once per session."""

    def factory(node):
        num_true, num_sampled = node.attr("num_true"), node.attr("num_sampled")
        unique = bool(node.attr("unique"))
        state = _session_state(node, make_sampler)

        def run(true_classes):
            sampler, rng = state
            true_classes = _check_true_classes(true_classes, num_true, sampler.range)
            if unique and num_sampled > sampler.range:
                raise invalid("Sampler's range is too small.")
            with sampler.lock:
                out = _sample_batch(sampler, rng, (num_sampled, unique), true_classes)
                sampler.update(true_classes)
            return out

        return run

    return factory


def _session_state(node, make_sampler):
    """(sampler, generator) for the node, one pair per session."""
    seed, seed2 = int(node.attr("seed") or 0), int(node.attr("seed2") or 0)

    def create():
        if seed == 0 and seed2 == 0:
            rng = np.random.default_rng()
        else:
            rng = np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, seed2 & 0xFFFFFFFFFFFFFFFF])
        return make_sampler(node), rng

    if node.resources is None:
        return create()
    return node.resources.lookup_or_create(_CONTAINER, node.name, create)


def _range_max(node) -> int:
    range_max = int(node.attr("range_max"))
    if range_max <= 0:
        raise invalid("range_max must be positive")
    return range_max


def _fixed_unigram(node) -> _Weighted:
    """TF's FixedUnigramSampler: reserved ids first (weight 0), then the unigrams or the
    vocab file's last fields, keeping the ids of this shard, each raised to `distortion`."""
    vocab_file, unigrams = node.attr("vocab_file") or "", list(node.attr("unigrams") or [])
    if isinstance(vocab_file, bytes):
        vocab_file = vocab_file.decode()
    if not vocab_file and not unigrams:
        raise invalid("Must provide either vocab_file or unigrams.")
    if vocab_file and unigrams:
        raise invalid("Must only provide one of vocab_file and unigrams.")
    shards, shard = int(node.attr("num_shards")), int(node.attr("shard"))
    distortion = _F32(node.attr("distortion"))
    reserved = int(node.attr("num_reserved_ids"))
    weights = [_F32(0)] * sum(1 for i in range(reserved) if i % shards == shard)
    values = _vocab_weights(vocab_file) if vocab_file else [_F32(u) for u in unigrams]
    weights += [np.power(w, distortion) for i, w in enumerate(values, start=reserved)
                if i % shards == shard]
    range_max = _range_max(node)
    if range_max != len(weights):
        raise invalid(f"range is {range_max} must be equal to weights size  {len(weights)}")
    return _Weighted(np.array(weights, _F32))


def _vocab_weights(path: str) -> list:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise errors.NotFoundError(None, None, f"{path}; {e.strerror}") from None
    out = []
    for line in lines:
        try:
            out.append(_F32(line.split(",")[-1]))
        except ValueError:
            raise invalid(f"Wrong vocabulary format at line: {line}") from None
    return out


register_kernel("UniformCandidateSampler")(
    _sampler_kernel(lambda node: _Uniform(_range_max(node))))
register_kernel("LogUniformCandidateSampler")(
    _sampler_kernel(lambda node: _LogUniform(_range_max(node))))
register_kernel("LearnedUnigramCandidateSampler")(
    _sampler_kernel(lambda node: _LearnedUnigram(_range_max(node))))
register_kernel("ThreadUnsafeUnigramCandidateSampler")(
    _sampler_kernel(lambda node: _LearnedUnigram(_range_max(node))))
register_kernel("FixedUnigramCandidateSampler")(_sampler_kernel(_fixed_unigram))
register_kernel("AllCandidateSampler")(
    _sampler_kernel(lambda node: _All(int(node.attr("num_sampled")))))


@register_kernel("ComputeAccidentalHits")
def _compute_accidental_hits(node):
    num_true = int(node.attr("num_true"))

    def run(true_classes, sampled):
        true_classes, sampled = np.asarray(true_classes), np.asarray(sampled)
        if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
            raise invalid("true_candidates must be a batch_size * num_true matrix")
        if sampled.ndim != 1:
            raise invalid("sampled_candidates must be a vector, which is typically an output "
                          "from CandidateSampler")
        position = {int(v): i for i, v in enumerate(sampled.tolist())}  # NOTE: last one wins
        hits = [(i, position[v]) for i, row in enumerate(true_classes.tolist()) for v in row
                if v in position]
        rows = np.array([h[0] for h in hits], np.int32)
        ids = np.array([h[1] for h in hits], np.int64)
        return rows, ids, np.full(len(hits), -np.finfo(_F32).max, _F32)

    return run
