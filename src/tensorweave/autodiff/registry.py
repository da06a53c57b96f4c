"""The gradient registry: one gradient function per op type.

    @RegisterGradient("Square")
    def _square_grad(op, grad):
        return grad * 2.0 * op.inputs[0]

A gradient function receives the forward `Operation` and one gradient per output, and returns
one gradient (or None) per input. `NotDifferentiable("Shape")` marks ops that have none.
"""

from __future__ import annotations

from tensorweave.registry import Registry, caller_site

_GRADIENTS: Registry[str, object] = Registry("Gradient")


class RegisterGradient:
    """Decorator registering a gradient function for `op_type` (refuses duplicates)."""

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        """Raises: AlreadyRegisteredError (a KeyError, as TF's) naming the first site."""
        op_type = self._op_type
        msg = None if op_type not in _GRADIENTS else (
            f"Registering two gradient with name '{op_type}'! (Previous registration was in "
            f"{_GRADIENTS.site(op_type)})")
        _GRADIENTS.register(op_type, fn, caller_site(2), msg)
        return fn


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TF's name
    """Declares that `op_type` has no gradient (its inputs get None)."""
    RegisterGradient(op_type)(None)


no_gradient = NotDifferentiable


def get_gradient_function(op):
    """The gradient function for `op` (honouring gradient_override_map), or None if declared
    not differentiable. Raises LookupError naming the op type when none is registered."""
    op_type = op.graph.gradient_override(op.type) or op.type
    try:
        op_type = op.get_attr("_gradient_op_type").decode()
    except ValueError:
        pass
    if op_type not in _GRADIENTS:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op_type})")
    return _GRADIENTS[op_type]


def has_gradient(op_type: str) -> bool:
    return op_type in _GRADIENTS



def registered_gradients() -> dict[str, object]:
    """A copy of the table: op type -> gradient function (None: declared not differentiable)."""
    return _GRADIENTS.as_dict()


def registration_site(op_type: str) -> str | None:
    """Where `op_type`'s gradient was registered (`file:line`), or None."""
    return _GRADIENTS.site(op_type)
