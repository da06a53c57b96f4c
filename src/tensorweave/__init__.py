"""tensorweave: a dataflow-graph ML runtime with the TensorFlow 1.x execution model.

`import tensorweave as tf` gives the TF1 (`tf.compat.v1`) namespace. This module only
re-exports; each name lives in the module the layout table of DESIGN.md names.
"""

import sys

# NOTE: registration happens here, by import, in this order: op types, kernels, gradients.
from tensorweave import ops as _ops  # noqa: F401  (registers every op type)
from tensorweave.runtime.kernels import cpu as _cpu_kernels  # noqa: F401  (every CPU kernel)
from tensorweave.runtime.kernels import xla as _xla_kernels  # noqa: F401  (lowerings, with jax)
from tensorweave import errors
from tensorweave.autodiff import (
    AggregationMethod, NotDifferentiable, RegisterGradient, UnconnectedGradients, gradients,
    no_gradient,
)
from tensorweave.autodiff import NotDifferentiable as NoGradient
from tensorweave.ops.indexed_slices import (
    IndexedSlices, IndexedSlicesValue, convert_to_tensor_or_indexed_slices,
)
from tensorweave.client.session import InteractiveSession, Session
from tensorweave.framework.default_session import get_default_session
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
from tensorweave.ops.array_ops import *  # noqa: F403
from tensorweave.ops.control_flow_ops import *  # noqa: F403
from tensorweave.ops.creation_ops import *  # noqa: F403
from tensorweave.ops.functional_ops import *  # noqa: F403
from tensorweave.ops.script_ops import *  # noqa: F403
from tensorweave.ops.tensor_array_ops import *  # noqa: F403
from tensorweave.ops.while_loop import *  # noqa: F403
from tensorweave.ops.diag_ops import *  # noqa: F403
from tensorweave.ops.gather_ops import *  # noqa: F403
from tensorweave.ops.joining_ops import *  # noqa: F403
from tensorweave.ops.slicing_ops import *  # noqa: F403
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_matmul_ops import *  # noqa: F403
from tensorweave.ops.math_ops import *  # noqa: F403
from tensorweave.ops.random_ops import (
    get_seed, multinomial, random_crop, random_gamma, random_normal, random_poisson,
    random_shuffle, random_uniform, set_random_seed, truncated_normal,
)
from tensorweave.ops.reduction_ops import *  # noqa: F403
from tensorweave.ops.state_ops import (
    assign, assign_add, assign_sub, count_up_to, scatter_add, scatter_div, scatter_max,
    scatter_min, scatter_mul, scatter_nd_add, scatter_nd_sub, scatter_nd_update, scatter_sub,
    scatter_update,
)
from tensorweave.ops.partitioned_variables import (  # noqa: F401
    create_partitioned_variables, fixed_size_partitioner, min_max_variable_partitioner,
    variable_axis_size_partitioner,
)
from tensorweave.ops.variable_scope import (
    AUTO_REUSE, VariableScope, get_local_variable, get_variable, get_variable_scope,
    no_regularizer, variable_op_scope, variable_scope,
)
from tensorweave.ops.variables import (
    Variable, all_variables, assert_variables_initialized, global_variables,
    global_variables_initializer, initialize_all_variables, initialize_local_variables,
    initialize_variables, is_variable_initialized, local_variables, local_variables_initializer,
    model_variables, moving_average_variables, report_uninitialized_variables,
    trainable_variables, variables_initializer,
)
from tensorweave.ops.init_ops import (
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer,
    ones_initializer, orthogonal_initializer, random_normal_initializer,
    random_uniform_initializer, truncated_normal_initializer, uniform_unit_scaling_initializer,
    variance_scaling_initializer, zeros_initializer,
)
from tensorweave.ops.registry import register_op
from tensorweave.proto.config_pb2 import (
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions,
)
from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.shapes import Dimension, TensorShape

from tensorweave import (  # noqa: E402  (sub-namespaces, as tf.* has them)
    graph_util, initializers, io, linalg, math, nn, python_io, queue, random, sparse, strings,
    test, timeline, train,
)
from tensorweave import app, compat, data, flags  # noqa: E402
from tensorweave import tf_logging as logging  # noqa: E402
from tensorweave import distribute  # noqa: E402  (tf.distribute.cluster_resolver)

compat.v1 = sys.modules[__name__]
from tensorweave import image  # noqa: E402
from tensorweave.ops.image_geometry import extract_image_patches  # noqa: E402
from tensorweave.data import gfile  # noqa: E402
from tensorweave.data.queues import (  # noqa: E402
    FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue,
)
from tensorweave.ops.linalg_ops import (  # noqa: E402
    cholesky, cholesky_solve, log_matrix_determinant, matrix_determinant, matrix_inverse,
    matrix_solve, matrix_triangular_solve, qr, self_adjoint_eig, self_adjoint_eigvals, svd,
)
from tensorweave.ops.stitch_ops import dynamic_partition, dynamic_stitch  # noqa: E402
from tensorweave.ops.sparse_ops import *  # noqa: E402, F403
from tensorweave.ops.check_ops import *  # noqa: E402, F403
from tensorweave.ops.string_ops import *  # noqa: E402, F403
from tensorweave.ops.math_extra_ops import *  # noqa: E402, F403
from tensorweave import bitwise  # noqa: E402
from tensorweave import nest  # noqa: E402
from tensorweave.framework.context import (  # noqa: E402
    container, disable_eager_execution, disable_v2_behavior, enable_eager_execution,
    enable_v2_behavior, executing_eagerly, init_scope,
)
from tensorweave.ops.load_library import load_file_system_library, load_op_library  # noqa: E402
from tensorweave.framework.tensor_util import make_ndarray, make_tensor_proto  # noqa: E402
from tensorweave.ops.logging_ops import print_v2 as print  # noqa: E402, A001
from tensorweave import debugging  # noqa: E402
from tensorweave import autograph, mixed_precision, profiler  # noqa: E402
from tensorweave import ragged  # noqa: E402
from tensorweave.ops.ragged_tensor import RaggedTensor  # noqa: E402
from tensorweave.ops.special_ops import betainc, igamma, igammac, polygamma, zeta  # noqa: E402
from tensorweave.ops.sequence_ops import reverse_sequence  # noqa: E402
from tensorweave.ops.accumulator_ops import (  # noqa: E402
    ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator,
)
from tensorweave.data.readers import (  # noqa: E402
    FixedLengthRecordReader, LMDBReader, ReaderBase, TextLineReader, TFRecordReader,
    WholeFileReader,
)
from tensorweave.formats.example import (  # noqa: E402
    FixedLenFeature, FixedLenSequenceFeature, SparseFeature, VarLenFeature,
)
from tensorweave.ops.sparse_tensor import *  # noqa: E402, F403
from tensorweave.ops.parsing_ops import *  # noqa: E402, F403
from tensorweave import contrib  # noqa: E402
from tensorweave.monitoring import summary  # noqa: E402
from tensorweave.training import layers, losses, metrics  # noqa: E402
from tensorweave import keras  # noqa: E402
from tensorweave.ops.io_ops import string_join  # noqa: E402
from tensorweave.proto.meta_graph_pb2 import MetaGraphDef  # noqa: E402
from tensorweave.training.meta_graph import export_meta_graph, import_meta_graph  # noqa: E402
from tensorweave.proto.event_pb2 import Event, SessionLog  # noqa: E402
from tensorweave.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata  # noqa: E402
from tensorweave.training.clip_ops import (  # noqa: E402
    clip_by_average_norm, clip_by_global_norm, clip_by_norm, global_norm,
)
from tensorweave.ops.importer import import_graph_def  # noqa: E402
from tensorweave.proto.graph_pb2 import GraphDef  # noqa: E402
from tensorweave.proto.node_def_pb2 import NodeDef  # noqa: E402
from tensorweave import saved_model  # noqa: E402
from tensorweave.proto.meta_graph_pb2 import SignatureDef, TensorInfo  # noqa: E402

# -- lookup tables, string hashing, feature columns (tf.lookup, tf.feature_column) --
from tensorweave import estimator, feature_column, lookup  # noqa: E402
from tensorweave.ops.lookup_tables import tables_initializer  # noqa: E402
from tensorweave.ops.string_hash_ops import (  # noqa: E402
    string_to_hash_bucket, string_to_hash_bucket_fast, string_to_hash_bucket_strong,
)
from tensorweave.ops.string_hash_ops import sparse_cross as sparse_cross  # noqa: E402

# -- tf.signal / tf.spectral, the FFT ops at top level as TF1 had them --
from tensorweave import signal  # noqa: E402
from tensorweave import xla  # noqa: E402  (tf.xla.experimental.jit_scope)
from tensorweave import signal as spectral  # noqa: E402
from tensorweave.ops.signal_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d  # noqa: E402
from tensorweave.autodiff.tape import GradientTape  # noqa: E402
from tensorweave import distributions  # noqa: E402

__version__ = "0.1.0"
