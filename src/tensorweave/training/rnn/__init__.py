"""TF1's recurrent networks: the `tf.nn.rnn_cell` cells and wrappers, and the drivers
`tf.nn.dynamic_rnn`, `bidirectional_dynamic_rnn`, `static_rnn`, `static_bidirectional_rnn`.
Variable names are TF1's (`rnn/basic_lstm_cell/kernel`), so checkpoints interoperate."""

from tensorweave.training.rnn import rnn_cell
from tensorweave.training.rnn.cell_base import LayerRNNCell, RNNCell
from tensorweave.training.rnn.cells import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
)
from tensorweave.training.rnn.rnn import bidirectional_dynamic_rnn, dynamic_rnn
from tensorweave.training.rnn.static_rnn import static_bidirectional_rnn, static_rnn
from tensorweave.training.rnn.wrappers import (
    DeviceWrapper,
    DropoutWrapper,
    MultiRNNCell,
    ResidualWrapper,
)

__all__ = ["rnn_cell", "RNNCell", "LayerRNNCell", "BasicRNNCell", "GRUCell", "LSTMStateTuple",
           "BasicLSTMCell", "LSTMCell", "MultiRNNCell", "DropoutWrapper", "ResidualWrapper",
           "DeviceWrapper", "dynamic_rnn", "bidirectional_dynamic_rnn", "static_rnn",
           "static_bidirectional_rnn"]
