"""Kernels the runtime itself needs: `_Arg`, `_Retval`, `Const`, `NoOp`."""

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel


@register_kernel("_Arg")
def _arg(node):
    def run():
        raise errors.InternalError(None, None, "_Arg is bound by the executor")

    return run


@register_kernel("_Retval")
def _retval(node):
    def run(x):
        raise errors.InternalError(None, None, "_Retval is bound by the executor")

    return run


@register_kernel("Const")
def _const(node):
    value = node.attr("value")

    def run():
        return value

    return run
