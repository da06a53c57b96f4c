"""How lowerings register: a kernel for the XLA device types whose callable takes and returns
jax values (it runs while the partition is traced, once per input-shape signature).

A lowering's factory gets the node's `KernelNode` as every kernel does and returns a function
of its inputs built from jax operations. Inputs listed in `const_inputs` (an axis, a shape)
arrive as concrete numpy arrays: the partition folds constant subgraphs at trace time and
compiles once per value of a received constant input.
"""

from __future__ import annotations

from tensorweave.runtime.kernels.registry import lookup_kernel, register_kernel
from tensorweave.runtime.kernels.xla.backend import XLA_DEVICE_TYPES, jax_modules

# op type → input positions that must be compile-time constants.
CONST_INPUTS: dict[str, tuple[int, ...]] = {}


def register_lowering(op: str, *, const_inputs: tuple[int, ...] = ()):
    """Decorator registering `factory(node) -> fn(*jax_inputs)` on every XLA device type."""

    def wrap(factory):
        for device_type in XLA_DEVICE_TYPES:
            register_kernel(op, device_type)(factory)
        if const_inputs:
            CONST_INPUTS[op] = const_inputs
        return factory

    return wrap


def register_simple_lowering(op: str, make) -> None:
    """Registers `make(jnp, lax)` — returning `fn(*inputs)` — as `op`'s attr-free lowering."""

    def factory(node):
        _, jnp, lax = jax_modules()
        return make(jnp, lax)

    register_lowering(op)(factory)


def share_cpu_kernel(op: str) -> None:
    """Registers `op`'s CPU kernel (its host-side part: `_Send`, `_Recv`, `_Arg`, `_Retval`)
    for the XLA device types; the partition runs these outside the compiled function."""
    kdef = lookup_kernel(op, "CPU")
    for device_type in XLA_DEVICE_TYPES:
        register_kernel(op, device_type, context=kdef.context)(kdef.factory)
