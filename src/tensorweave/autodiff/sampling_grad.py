"""Ops of the sampled losses without a gradient: the candidate samplers and
ComputeAccidentalHits (TF's candidate_sampling_ops.py NotDifferentiable lines)."""

from tensorweave.autodiff.registry import NotDifferentiable

for _name in ("UniformCandidateSampler", "LogUniformCandidateSampler",
              "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler",
              "FixedUnigramCandidateSampler", "AllCandidateSampler", "ComputeAccidentalHits"):
    NotDifferentiable(_name)
