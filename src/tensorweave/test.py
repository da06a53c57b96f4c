"""`tf.test`: TF1's TestCase, `main`, gradient checking against finite differences, and the
test helpers (temp dirs, devices, local clusters, GraphDef comparison)."""

from unittest import mock  # noqa: F401

from tensorweave.client.gradient_checker import compute_gradient, compute_gradient_error  # noqa: F401
from tensorweave.testing.case import TestCase  # noqa: F401
from tensorweave.testing.helpers import (  # noqa: F401
    Benchmark, StubOutForTesting, assert_equal_graph_def, benchmark_config, create_local_cluster,
    disable_with_predicate, get_temp_dir, gpu_device_name, is_built_with_cuda,
    is_built_with_gpu_support, is_built_with_rocm, is_built_with_xla, is_cpu_target_available,
    is_gpu_available, main, test_src_dir_path, with_eager_op_as_function,
)
