"""tensorweave: a dataflow-graph ML runtime with the TensorFlow 1.x execution model.

`import tensorweave as tf` gives the TF1 (`tf.compat.v1`) namespace. This module only
re-exports; each name lives in the module the layout table of DESIGN.md names.
"""

from tensorweave import ops as _ops  # noqa: F401  (registers ops and kernels)
from tensorweave import errors
from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient
from tensorweave.client.session import InteractiveSession, Session, get_default_session
from tensorweave.dtypes import *  # noqa: F403
from tensorweave.dtypes import DType, as_dtype
from tensorweave.dtypes import bool_ as bool  # noqa: A001 - TF's name
from tensorweave.framework.graph import (
    Graph, GraphKeys, add_to_collection, add_to_collections, get_collection,
    get_collection_ref, get_default_graph, reset_default_graph,
)
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.scopes import (
    colocate_with, control_dependencies, device, get_name_scope, name_scope,
)
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function,
)
from tensorweave.ops.array_ops import identity, placeholder, placeholder_with_default
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import add, sin
from tensorweave.ops.registry import register_op
from tensorweave.proto.config_pb2 import (
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions,
)
from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.shapes import Dimension, TensorShape

__version__ = "0.1.0"
