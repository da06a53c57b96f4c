"""Op families: schemas (OpDefs with shape functions) and their Python wrappers.

Importing this package registers every op type and, through `runtime.kernels.cpu`, every
CPU kernel.
"""

from tensorweave.monitoring.summary import summary_ops  # noqa: F401
from tensorweave.ops import (  # noqa: F401
    accumulator_ops,
    array_ops,
    constant_op,
    control_flow_ops,
    creation_ops,
    dataset_ops,
    diag_ops,
    function_ops,
    functional_ops,
    fused_ops,
    gather_ops,
    init_ops,
    io_ops,
    joining_ops,
    linalg_ops,
    lookup_ops,
    math_matmul_ops,
    math_ops,
    nn_conv,
    nn_impl,
    nn_losses,
    nn_norm,
    nn_ops,
    nn_pool_grad_ops,
    parsing_ops,
    queue_ops,
    random_ops,
    reader_ops,
    reduction_ops,
    script_ops,
    sendrecv_ops,
    sequence_ops,
    slicing_ops,
    special_ops,
    stack_ops,
    state_ops,
    stitch_ops,
    string_hash_ops,
    tensor_array_ops,
    training_ops,
    variable_scope,
    variables,
    while_loop,
)
from tensorweave.runtime.kernels import cpu  # noqa: F401
