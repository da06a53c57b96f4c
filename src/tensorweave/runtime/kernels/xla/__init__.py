"""Lowerings of op types to jax operations for the XLA devices (`XLA_CPU`, `XLA_GPU`).

Registered only when jax is installed (the optional extra `tensorweave[xla]`); importing this
package does not import jax. Import after the CPU kernels: the host-side ops share theirs.
"""

from tensorweave.runtime.kernels.xla.backend import available

if available():
    from tensorweave.runtime.kernels.xla import (  # noqa: F401
        array,
        control_flow,
        conv,
        data_flow,
        math,
        nn,
        random,
        state,
    )
