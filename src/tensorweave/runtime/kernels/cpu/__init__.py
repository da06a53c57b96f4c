"""CPU kernels on numpy, one module per op family. Importing this package registers them."""

from tensorweave.runtime.kernels.cpu import (  # noqa: F401
    array, base, control_flow, conv, creation, diag, fused, gather, joining, math, nn, nn_norm,
    random, reduction, script, sendrecv, slicing, state, summary, tensor_array, training,
)
