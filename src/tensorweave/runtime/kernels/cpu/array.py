"""CPU kernels for array ops."""

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel, register_simple_kernel


@register_kernel("Placeholder")
def _placeholder(node):
    dt, shape = node.attr("dtype"), node.attr("shape")

    def run():
        raise errors.InvalidArgumentError(
            None, None, f"You must feed a value for placeholder tensor '{node.name}' with dtype "
                        f"{dt.name} and shape {shape}")

    return run


register_simple_kernel("PlaceholderWithDefault", lambda x: x, forwards_input=True)
register_simple_kernel("Identity", lambda x: x, forwards_input=True)
