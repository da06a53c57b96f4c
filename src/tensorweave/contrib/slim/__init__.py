"""`tf.contrib.slim` (TF-Slim, TF 1.15): the contrib layers, initializers and regularizers,
`arg_scope`, the variable helpers, and the `losses`, `metrics`, `learning`, `evaluation`,
`utils` and `nets` modules, under one name: `slim = tf.contrib.slim`."""

from tensorweave.contrib import layers
from tensorweave.contrib import layers_utils as utils
from tensorweave.contrib.arg_scope import (  # noqa: F401
    add_arg_scope,
    arg_scope,
    arg_scoped_arguments,
    current_arg_scope,
    has_arg_scope,
)
from tensorweave.contrib.layers import (  # noqa: F401
    apply_regularization,
    avg_pool2d,
    batch_norm,
    conv2d,
    conv2d_transpose,
    convolution2d,
    convolution2d_transpose,
    dropout,
    flatten,
    fully_connected,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    layer_norm,
    linear,
    max_pool2d,
    one_hot_encoding,
    repeat,
    separable_conv2d,
    separable_convolution2d,
    softmax,
    stack,
    sum_regularizer,
    variance_scaling_initializer,
    xavier_initializer,
    xavier_initializer_conv2d,
)
from tensorweave.contrib.slim import evaluation, learning, losses, metrics, nets
from tensorweave.contrib.variables import (  # noqa: F401
    add_model_variable,
    assign_from_checkpoint,
    assign_from_checkpoint_fn,
    get_local_variables,
    get_model_variables,
    get_trainable_variables,
    get_unique_variable,
    get_variables,
    get_variables_by_name,
    get_variables_by_suffix,
    get_variables_to_restore,
    model_variable,
    variable,
)

__all__ = [
    "evaluation", "layers", "learning", "losses", "metrics", "nets", "utils", "arg_scope",
    "add_arg_scope", "conv2d", "fully_connected", "max_pool2d", "avg_pool2d", "flatten",
    "dropout", "batch_norm", "layer_norm", "repeat", "stack", "softmax", "one_hot_encoding",
    "l2_regularizer", "variance_scaling_initializer", "xavier_initializer", "get_variables",
    "get_model_variables", "model_variable", "variable", "get_variables_to_restore",
    "assign_from_checkpoint", "assign_from_checkpoint_fn",
    "conv2d_transpose", "convolution2d_transpose", "separable_conv2d",
    "separable_convolution2d",
]
