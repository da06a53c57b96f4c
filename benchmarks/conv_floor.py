"""Micro-benchmark of the CPU conv/pool kernels on the CNN benchmark's shapes, beside the floor.

Times Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (3x3 SAME, NHWC, float32) for
64x28x28x1 -> 32 and 64x14x14x32 -> 64, and MaxPool/MaxPoolGrad 2x2/2 on 64x28x28x32 and
64x14x14x64 (inputs half zeros, as after a ReLU), by calling the registered kernels directly
(no session overhead). Beside each kernel: the generic `conv_impl` path it replaced, and the
floor — numpy's one GEMM of the same size (`gemm_ms`: (N*OH*OW, KH*KW*C) x (KH*KW*C, O), one
per conv pass) or one copy of the input (`copy_ms`, for pooling). The machine is shared, so the
functions run round-robin and each reports its minimum over the repeats. Prints one JSON object
of milliseconds per call.

    .venv/bin/python benchmarks/conv_floor.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import tensorweave  # noqa: F401  (registers ops)
import tensorweave.ops.nn_conv  # noqa: F401
import tensorweave.runtime.kernels.cpu.conv  # noqa: F401
from tensorweave import dtypes
from tensorweave.ops.nn_geometry import window_2d
from tensorweave.ops.registry import NO_DEFAULT, OPS
from tensorweave.runtime.kernels.cpu import conv_impl as impl
from tensorweave.runtime.kernels.registry import KernelNode, lookup_kernel


def kernel(op_type: str, **attrs):
    op_def = OPS.lookup(op_type)
    full = {a.name: a.default for a in op_def.attrs.values() if a.default is not NO_DEFAULT}
    full.update(attrs)
    node = KernelNode(op_type, op_type, full, [], [dtypes.float32], op_def=op_def)
    return lookup_kernel(op_type).factory(node)


def min_ms(fns: dict, repeat: int) -> dict:
    """Minimum milliseconds per call of each function, run round-robin `repeat` times."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: round(t * 1e3, 3) for name, t in best.items()}


def relu_like(rng, shape) -> np.ndarray:
    return np.maximum(rng.standard_normal(shape, dtype=np.float32), 0)


def conv_case(n, h, w, c, o, repeat) -> dict:
    rng = np.random.default_rng(0)
    x = relu_like(rng, (n, h, w, c))
    f = rng.standard_normal((3, 3, c, o), dtype=np.float32)
    dy = rng.standard_normal((n, h, w, o), dtype=np.float32)
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME"}
    win = window_2d((h, w), (3, 3), attrs)
    fwd = kernel("Conv2D", **attrs)
    bwd_in = kernel("Conv2DBackpropInput", **attrs)
    bwd_f = kernel("Conv2DBackpropFilter", **attrs)
    xs, fs = np.array(x.shape, np.int32), np.array(f.shape, np.int32)
    cols = rng.standard_normal((n * h * w, 9 * c), dtype=np.float32)
    f2 = f.reshape(-1, o)
    out = min_ms({
        "gemm": lambda: np.dot(cols, f2),
        "forward": lambda: fwd(x, f),
        "backprop_input": lambda: bwd_in(xs, f, dy),
        "backprop_filter": lambda: bwd_f(x, fs, dy),
        "generic_forward": lambda: impl.conv2d(x, f, win),
        "generic_backprop_input": lambda: impl.conv2d_backprop_input(dy, f, x.shape, win),
        "generic_backprop_filter": lambda: impl.conv2d_backprop_filter(x, dy, f.shape, win),
    }, repeat)
    out["total"] = round(out["forward"] + out["backprop_input"] + out["backprop_filter"], 3)
    out["generic_total"] = round(sum(v for k, v in out.items() if k.startswith("generic_")), 3)
    out["floor_total"] = round(3 * out["gemm"], 3)
    return out


def pool_case(n, h, w, c, repeat) -> dict:
    rng = np.random.default_rng(0)
    x = relu_like(rng, (n, h, w, c))
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    win = window_2d((h, w), (2, 2), attrs)
    pool = kernel("MaxPool", **attrs)
    grad = kernel("MaxPoolGrad", **attrs)
    y = pool(x)
    dy = rng.standard_normal(y.shape, dtype=np.float32)
    return min_ms({
        "copy": lambda: x.copy(),
        "max_pool": lambda: pool(x),
        "max_pool_grad": lambda: grad(x, y, dy),
        "generic_max_pool": lambda: impl.max_pool(x, win),
        "generic_max_pool_grad": lambda: impl.max_pool_grad(x, y, dy, win),
    }, repeat)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    result = {
        "conv_64x28x28x1_to_32_ms": conv_case(64, 28, 28, 1, 32, args.repeat),
        "conv_64x14x14x32_to_64_ms": conv_case(64, 14, 14, 32, 64, args.repeat),
        "pool_64x28x28x32_2x2_ms": pool_case(64, 28, 28, 32, args.repeat),
        "pool_64x14x14x64_2x2_ms": pool_case(64, 14, 14, 64, args.repeat),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
