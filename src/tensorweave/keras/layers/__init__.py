"""`tf.keras.layers`."""

from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_layer import Input, InputLayer
from tensorweave.keras.layers.advanced_activations import (
    ELU,
    LeakyReLU,
    PReLU,
    ReLU,
    Softmax,
    ThresholdedReLU,
)
from tensorweave.keras.layers.convolutional import (
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Convolution1D,
    Convolution2D,
    Cropping2D,
    Deconvolution2D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
    SeparableConvolution1D,
    SeparableConvolution2D,
    UpSampling1D,
    UpSampling2D,
    ZeroPadding1D,
    ZeroPadding2D,
)
from tensorweave.keras.layers.core import (
    Activation,
    ActivityRegularization,
    Dense,
    Dropout,
    Flatten,
    Lambda,
    Masking,
    Permute,
    RepeatVector,
    Reshape,
)
from tensorweave.keras.layers.embeddings import Embedding
from tensorweave.keras.layers.merge import (
    Add,
    Average,
    Concatenate,
    Dot,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    dot,
    maximum,
    minimum,
    multiply,
    subtract,
)
from tensorweave.keras.layers.noise import (
    AlphaDropout,
    GaussianDropout,
    GaussianNoise,
    SpatialDropout1D,
    SpatialDropout2D,
)
from tensorweave.keras.layers.normalization import BatchNormalization, LayerNormalization
from tensorweave.keras.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AvgPool1D,
    AvgPool2D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    MaxPool1D,
    MaxPool2D,
    MaxPooling1D,
    MaxPooling2D,
)
from tensorweave.keras.layers.recurrent import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    SimpleRNN,
    SimpleRNNCell,
)
from tensorweave.keras.layers.wrappers import Bidirectional, TimeDistributed, Wrapper
