"""How lowerings register: a kernel for the XLA device types whose callable takes and returns
jax values (it runs while the partition is traced, once per input-shape signature).

A lowering's factory gets the node's `KernelNode` as every kernel does and returns a function
of its inputs built from jax operations. Inputs listed in `const_inputs` (an axis, a shape)
arrive as concrete numpy arrays: the partition folds constant subgraphs at trace time and
compiles once per value of a received constant input.

State (variables, random counters) is threaded through the compiled function:
- A ref input (the op wants the ref: Assign, Apply*) arrives as a `VarState`; the lowering
  reads it with `read()` and updates it with `write(value)`, and returns it as its ref output.
  Ops registered with `writes_state=True` are run once per step even when nothing consumes
  them (they are the partition's side effects).
- Ops registered with `counter=True` (random ops) get a traced uint32 step counter as their
  first argument; the executable advances it by one per run, so draws differ from step to
  step without recompiling.
"""

from __future__ import annotations

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.registry import (
    lookup_kernel,
    register_device_constraint,
    register_kernel,
)
from tensorweave.runtime.kernels.xla.backend import XLA_DEVICE_TYPES, jax_modules

# op type → input positions that must be compile-time constants (negative: from the end).
CONST_INPUTS: dict[str, tuple[int, ...]] = {}
# op types that update a variable (run once per step whether or not anything consumes them).
STATE_WRITERS: set[str] = set()
# op types whose lowering takes a step counter first (random ops).
COUNTER_OPS: set[str] = set()


_NOT_XLA = frozenset([dtypes.string, dtypes.resource, dtypes.variant])


def xla_types_only(attrs: dict) -> bool:
    """Whether no type attr of a node names a string, resource or variant type (XLA has no
    such tensors: those nodes stay on a CPU, by soft placement, as in TF).

    NOTE: an Enter (`frame_name`) may carry a stack's or TensorArray's handle into a loop
    (a trace-time object on XLA); placement keeps a loop whose handles are others on a CPU
    (runtime/xla_control_flow.py)."""
    if "frame_name" in attrs:
        return attrs.get("T") != dtypes.string
    for v in attrs.values():
        for x in v if isinstance(v, (list, tuple)) else (v,):
            if isinstance(x, dtypes.DType) and x.base_dtype in _NOT_XLA:
                return False
    return True


for _device_type in XLA_DEVICE_TYPES:
    register_device_constraint(_device_type, xla_types_only)


class VarState:
    """A variable inside a trace: its `Ref` and its current value (a jax value, or None
    while uninitialized). `written` tells the executable to store the value back."""

    __slots__ = ("ref", "value", "written")

    def __init__(self, ref, value):
        self.ref = ref
        self.value = value
        self.written = False

    def read(self):
        """The current value. Raises FailedPreconditionError when never assigned."""
        if self.value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.ref.name}")
        return self.value

    def write(self, value) -> None:
        self.value = value
        self.written = True


def register_lowering(op: str, *, const_inputs: tuple[int, ...] = (), writes_state=False,
                      counter=False):
    """Decorator registering `factory(node) -> fn(*jax_inputs)` on every XLA device type."""

    def wrap(factory):
        for device_type in XLA_DEVICE_TYPES:
            register_kernel(op, device_type)(factory)
        if const_inputs:
            CONST_INPUTS[op] = const_inputs
        if writes_state:
            STATE_WRITERS.add(op)
        if counter:
            COUNTER_OPS.add(op)
        return factory

    return wrap


def register_simple_lowering(op: str, make) -> None:
    """Registers `make(jnp, lax)` — returning `fn(*inputs)` — as `op`'s attr-free lowering."""

    def factory(node):
        _, jnp, lax = jax_modules()
        return make(jnp, lax)

    register_lowering(op)(factory)


def share_cpu_kernel(op: str) -> None:
    """Registers `op`'s CPU kernel (its host-side part: `_Send`, `_Recv`, `_Arg`, `_Retval`,
    a variable's `Ref` lookup) for the XLA device types; the partition runs these outside the
    compiled function."""
    kdef = lookup_kernel(op, "CPU")
    for device_type in XLA_DEVICE_TYPES:
        register_kernel(op, device_type, context=kdef.context)(kdef.factory)
