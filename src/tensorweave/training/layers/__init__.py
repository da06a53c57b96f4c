"""`tf.layers`: TF1's object-oriented and functional layers (variables named as TF1 names
them, so checkpoints load in both directions)."""

from tensorweave.training.layers.base import Layer
from tensorweave.training.layers.convolutional import (
    Conv2D,
    Conv2DTranspose,
    Convolution2D,
    Convolution2DTranspose,
    Deconv2D,
    Deconvolution2D,
    conv2d,
    conv2d_transpose,
    convolution2d,
    convolution2d_transpose,
    deconv2d,
    deconvolution2d,
)
from tensorweave.training.layers.convolutional_nd import (
    Conv1D,
    Conv3D,
    Convolution1D,
    Convolution3D,
    conv1d,
    conv3d,
    convolution1d,
    convolution3d,
)
from tensorweave.training.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from tensorweave.training.layers.normalization import BatchNormalization, batch_normalization
from tensorweave.training.layers.pooling import (
    AveragePooling2D,
    AvgPool2D,
    MaxPool2D,
    MaxPooling2D,
    average_pooling2d,
    avg_pool2d,
    max_pool2d,
    max_pooling2d,
)
from tensorweave.training.layers.pooling_nd import (
    AveragePooling1D,
    AveragePooling3D,
    AvgPool1D,
    AvgPool3D,
    MaxPool1D,
    MaxPool3D,
    MaxPooling1D,
    MaxPooling3D,
    average_pooling1d,
    average_pooling3d,
    max_pooling1d,
    max_pooling3d,
)
from tensorweave.training.layers.separable import (
    SeparableConv1D,
    SeparableConv2D,
    separable_conv1d,
    separable_conv2d,
)
from tensorweave.training.layers.utils import InputSpec

__all__ = [
    "Layer", "InputSpec", "Dense", "dense", "Dropout", "dropout", "Flatten", "flatten",
    "Conv2D", "conv2d", "Conv2DTranspose", "conv2d_transpose", "MaxPooling2D",
    "max_pooling2d", "AveragePooling2D", "average_pooling2d", "BatchNormalization",
    "batch_normalization", "Convolution2D", "Convolution2DTranspose", "Deconvolution2D",
    "Deconv2D", "convolution2d", "convolution2d_transpose", "deconvolution2d", "deconv2d",
    "MaxPool2D", "AvgPool2D", "max_pool2d", "avg_pool2d", "Conv1D", "conv1d", "Conv3D",
    "conv3d", "Convolution1D", "Convolution3D", "convolution1d", "convolution3d",
    "MaxPooling1D", "AveragePooling1D", "MaxPooling3D", "AveragePooling3D", "max_pooling1d",
    "average_pooling1d", "max_pooling3d", "average_pooling3d", "MaxPool1D", "AvgPool1D",
    "MaxPool3D", "AvgPool3D", "SeparableConv1D", "SeparableConv2D", "separable_conv1d",
    "separable_conv2d",
]
