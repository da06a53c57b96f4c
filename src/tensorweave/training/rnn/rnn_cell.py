"""`tf.nn.rnn_cell`: TF1's RNN cell namespace."""

from tensorweave.training.rnn.cell_base import LayerRNNCell, RNNCell
from tensorweave.training.rnn.cells import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
)
from tensorweave.training.rnn.wrappers import (
    DeviceWrapper,
    DropoutWrapper,
    MultiRNNCell,
    ResidualWrapper,
)

__all__ = ["RNNCell", "LayerRNNCell", "BasicRNNCell", "GRUCell", "LSTMStateTuple",
           "BasicLSTMCell", "LSTMCell", "MultiRNNCell", "DropoutWrapper", "ResidualWrapper",
           "DeviceWrapper"]
