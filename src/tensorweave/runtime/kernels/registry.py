"""The kernel registry: one kernel per (op type, device type).

A kernel is a *factory*: at plan-build time it receives a `KernelNode` (the node's attrs,
dtypes and the device's resources) and returns the callable that runs each step, so nothing
is looked up by name per step:

    @register_kernel("MatMul")
    def _matmul(node):
        ta, tb = node.attr("transpose_a"), node.attr("transpose_b")
        def run(a, b):
            return (a.T if ta else a) @ (b.T if tb else b)
        return run

The callable takes the input arrays and returns the output (one output), a tuple (several) or
None (none). With `context=True` it is called as `run(ctx, *inputs)`, `ctx` being the step's
`StepContext` (step id, rendezvous, deadline, cancellation). Kernels never mutate inputs unless
the op's contract says so; `forwards_input=True` declares that an output may alias an input (a
view or the same array), so the executor copies it before handing it to the user when the
input is persistent (a constant or variable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tensorweave import errors
from tensorweave.registry import Registry, caller_site


@dataclass
class KernelDef:
    op: str
    device_type: str
    factory: Callable
    context: bool = False
    forwards_input: bool = False
    defined_at: str = ""


@dataclass
class KernelNode:
    """What a kernel factory sees about its node."""

    name: str
    op: str
    attrs: dict
    input_dtypes: list
    output_dtypes: list
    device: str = ""
    resources: object = None
    op_def: object = None
    extra: dict = field(default_factory=dict)

    def attr(self, name: str, default=None):
        return self.attrs.get(name, default)


_KERNELS: Registry[tuple[str, str], KernelDef] = Registry("Kernel")
# device type → predicates on a node's attrs every kernel of that device type must pass
# (the XLA devices take no string, resource or variant tensors).
_DEVICE_CONSTRAINTS: dict[str, list[Callable]] = {}


def register_device_constraint(device_type: str, accepts: Callable) -> None:
    """`accepts(attrs) -> bool` must hold for a node to run on any kernel of `device_type`."""
    _DEVICE_CONSTRAINTS.setdefault(device_type, []).append(accepts)


def register_kernel(op: str, device_type: str = "CPU", *, context: bool = False,
                    forwards_input: bool = False):
    """Decorator registering a kernel factory for `op` on `device_type`.

    Raises:
      AlreadyRegisteredError (a ValueError): a kernel for (op, device_type) already exists
        (the message says where).
    """

    def wrap(factory):
        key = (op, device_type)
        first = _KERNELS.get(key)
        msg = None if first is None else (
            f"Kernel for op '{op}' on {device_type} already registered at {first.defined_at}")
        site = caller_site(2)
        _KERNELS.register(key, KernelDef(op, device_type, factory, context, forwards_input,
                                         site), site, msg)
        return factory

    return wrap


def register_simple_kernel(op: str, fn: Callable, device_type: str = "CPU", **flags) -> None:
    """Registers `fn(*inputs)` as the kernel of `op`, independent of attrs."""
    register_kernel(op, device_type, **flags)(lambda node: fn)


def lookup_kernel(op: str, device_type: str = "CPU") -> KernelDef:
    """The kernel of `op` on `device_type`. Raises NotFoundError listing where it exists."""
    k = _KERNELS.get((op, device_type))
    if k is None:
        have = sorted(d for (o, d) in _KERNELS if o == op)
        where = f"; registered devices: [{', '.join(have)}]" if have else ""
        raise errors.NotFoundError(
            None, None, f"No registered '{op}' OpKernel for '{device_type}' devices{where}"
        )
    return k


def has_kernel(op: str, device_type: str = "CPU", attrs: dict | None = None) -> bool:
    """Whether `op` has a kernel on `device_type` (for a node with `attrs`, when given: the
    device's constraints must accept them)."""
    if (op, device_type) not in _KERNELS:
        return False
    return attrs is None or all(ok(attrs) for ok in _DEVICE_CONSTRAINTS.get(device_type, ()))


def kernel_device_types(op: str) -> list[str]:
    return sorted(d for (o, d) in _KERNELS if o == op)


def registered_kernels() -> list[tuple[str, str]]:
    return sorted(_KERNELS)
