"""`tf.nn`: activations, convolution, pooling, normalization, losses, embeddings, dropout."""

from tensorweave.ops.candidate_sampling_ops import *  # noqa: F403
from tensorweave.ops.ctc_ops import *  # noqa: F403
from tensorweave.ops.math_ops import sigmoid, tanh  # noqa: F401
from tensorweave.ops.embedding_ops import *  # noqa: F403
from tensorweave.ops.nn_composite import *  # noqa: F403
from tensorweave.ops.nn_conv import *  # noqa: F403
from tensorweave.ops.nn_conv3d import *  # noqa: F403
from tensorweave.ops.nn_impl import *  # noqa: F403
from tensorweave.ops.nn_losses import *  # noqa: F403
from tensorweave.ops.nn_norm import *  # noqa: F403
from tensorweave.ops.nn_ops import *  # noqa: F403
from tensorweave.ops.nn_sampled import *  # noqa: F403
from tensorweave.ops.random_ops import dropout  # noqa: F401
from tensorweave.training.rnn import rnn_cell  # noqa: F401
from tensorweave.training.rnn.rnn import bidirectional_dynamic_rnn, dynamic_rnn  # noqa: F401
from tensorweave.training.rnn.static_rnn import (  # noqa: F401
    static_bidirectional_rnn,
    static_rnn,
)
