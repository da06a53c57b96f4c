"""`tf.random`: TF1.13+ aliases of the random ops."""

from tensorweave.ops.random_ops import (  # noqa: F401
    get_seed, random_gamma as gamma, random_normal as normal, random_poisson as poisson,
    random_shuffle as shuffle, random_uniform as uniform, set_random_seed, truncated_normal,
)
from tensorweave.ops.random_ops import multinomial  # noqa: F401
from tensorweave.ops.random_ops import multinomial as categorical  # noqa: F401
from tensorweave.ops.candidate_sampling_ops import (  # noqa: F401
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler, uniform_candidate_sampler,
)
