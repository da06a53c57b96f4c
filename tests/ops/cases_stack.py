"""Harness entries for the StackV2 family: a stack is a per-step handle that needs pushes and
pops ordered around it, so the ops are EXEMPT here and tested in the file named below."""

from tensorweave.ops import stack_ops  # noqa: F401
from tensorweave.runtime.kernels.cpu import stack  # noqa: F401

CASES: list = []

_STACK = ("tests/autodiff/test_while_grad.py (test_stack_push_pop_lifo, test_stack_errors, "
          "and every while-loop gradient)")

EXEMPT = {"StackV2": _STACK, "StackPushV2": _STACK, "StackPopV2": _STACK, "StackCloseV2": _STACK}
