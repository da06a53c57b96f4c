"""The CPU kernel of `XlaLaunch`: the node's cluster function, compiled by XLA through jax.

Registered only when jax is installed (`tensorweave[xla]`); without it the master never makes
an `XlaLaunch` node, and a GraphDef that holds one fails at placement (no kernel).
"""

from __future__ import annotations

from tensorweave.runtime.kernels.cpu.dataset import find_function
from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.runtime.kernels.xla.backend import available


def _xla_launch(node):
    from tensorweave.runtime.xla_cluster import ClusterExecutable

    exe = ClusterExecutable(find_function(node, "function"), node.name)
    n = len(node.attr("Tresults") or ())
    if n == 1:
        return lambda *args: exe(*args)[0]
    return exe if n else (lambda *args: (exe(*args), None)[1])


if available():
    register_kernel("XlaLaunch")(_xla_launch)
