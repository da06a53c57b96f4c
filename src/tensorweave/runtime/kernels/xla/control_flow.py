"""The XLA devices' kernels of TF1's loop ops (Enter, Merge, Switch, LoopCond, NextIteration,
Exit) and ControlTrigger.

A partition's while-loop frames are rebuilt as `lax.while_loop` by runtime/xla_control_flow.py,
which reads these nodes' structure and never calls their kernels one by one: the kernels are
registered so that placement knows the XLA devices take the ops, and fail if reached outside
a loop (a `tf.cond`'s Switch and Merge stay on a CPU: placement keeps them there).
LoopCond and ControlTrigger also work on their own (an identity, a no-op).
"""

from __future__ import annotations

from tensorweave import errors
from tensorweave.runtime.kernels.xla.lower import register_lowering

LOOP_OPS = ("Enter", "Exit", "Merge", "Switch", "NextIteration")


def _structural(node):
    def run(*inputs):
        raise errors.UnimplementedError(
            None, None, f"{node.op} {node.name} is not part of a while loop this XLA device "
                        "can compile (a tf.cond's Switch and Merge run on a CPU)")

    return run


for _op in LOOP_OPS:
    register_lowering(_op)(_structural)

register_lowering("LoopCond")(lambda node: lambda pred: pred)
register_lowering("ControlTrigger")(lambda node: lambda *xs: None)
