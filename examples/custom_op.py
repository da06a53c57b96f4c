"""Registering your own op, its CPU kernel and its gradient — the same calls tensorweave uses.

Run: .venv/bin/python examples/custom_op.py
"""

import numpy as np

import tensorweave as tf
from tensorweave.ops.apply import apply_op

# 1. The op: TF-style spec strings, and a shape function run when the op is added to a graph.
tf.register_op(
    "SoftClip",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=["T: {float, double}", "limit: float = 1.0"],
    shape_fn=lambda ctx: ctx.input_shape(0),
)


# 2. Its CPU kernel: a factory that reads attrs once and returns the per-step function.
@tf.register_kernel("SoftClip")
def _soft_clip_kernel(node):
    limit = node.attr("limit")

    def run(x):
        return (limit * np.tanh(x / limit)).astype(x.dtype, copy=False)

    return run


# 3. Its gradient: d/dx limit*tanh(x/limit) = 1 - tanh(x/limit)^2.
@tf.RegisterGradient("SoftClip")
def _soft_clip_grad(op, grad):
    limit = op.get_attr("limit")
    t = apply_op("SoftClip", op.inputs[0], limit=limit) / limit
    return grad * (1.0 - t * t)


def soft_clip(x, limit=1.0, name=None):
    return apply_op("SoftClip", x, limit=limit, name=name)


if __name__ == "__main__":
    x = tf.placeholder(tf.float32, [None])
    y = soft_clip(x, limit=2.0)
    with tf.Session() as sess:
        print("soft_clip:", sess.run(y, {x: [-10.0, 0.5, 10.0]}))
    print("static shape:", y.shape, "op:", y.op.type)
