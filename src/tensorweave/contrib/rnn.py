"""`tf.contrib.rnn`: TF1's contrib aliases of the core RNN cells and drivers, and the contrib
cells (`LayerNormBasicLSTMCell`, `AttentionCellWrapper`, `OutputProjectionWrapper`,
`InputProjectionWrapper`, `EmbeddingWrapper`)."""

from tensorweave.contrib.rnn_cells import (
    AttentionCellWrapper,
    EmbeddingWrapper,
    InputProjectionWrapper,
    LayerNormBasicLSTMCell,
    OutputProjectionWrapper,
)
from tensorweave.training.rnn.cell_base import LayerRNNCell, RNNCell
from tensorweave.training.rnn.cells import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
)
from tensorweave.training.rnn.static_rnn import static_bidirectional_rnn, static_rnn
from tensorweave.training.rnn.wrappers import (
    DeviceWrapper,
    DropoutWrapper,
    MultiRNNCell,
    ResidualWrapper,
)

__all__ = ["RNNCell", "LayerRNNCell", "BasicRNNCell", "GRUCell", "LSTMStateTuple",
           "BasicLSTMCell", "LSTMCell", "MultiRNNCell", "DropoutWrapper", "ResidualWrapper",
           "DeviceWrapper", "static_rnn", "static_bidirectional_rnn", "LayerNormBasicLSTMCell",
           "OutputProjectionWrapper", "InputProjectionWrapper", "AttentionCellWrapper",
           "EmbeddingWrapper"]
