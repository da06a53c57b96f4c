"""Micro-benchmark of the CPU conv/pool kernels on the CNN benchmark's shapes.

Times Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (3x3 SAME, NHWC, float32) for
64x28x28x1 -> 32 and 64x14x14x32 -> 64, plus MaxPool/MaxPoolGrad 2x2/2 on 64x28x28x32, by
calling the registered kernels directly (no session overhead). Prints one JSON object of
milliseconds per call (median of repeats).

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
from tensorweave.ops.registry import NO_DEFAULT, OPS
from tensorweave.runtime.kernels.registry import KernelNode, lookup_kernel


def kernel(op_type: str, **attrs):
    op_def = OPS.lookup(op_type)
    full = {a.name: a.default for a in op_def.attrs.values() if a.default is not NO_DEFAULT}
    full.update(attrs)
    node = KernelNode(op_type, op_type, full, [], [dtypes.float32], op_def=op_def)
    return lookup_kernel(op_type).factory(node)


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e3)


def conv_case(n, h, w, c, o, repeat) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, w, c), dtype=np.float32)
    f = rng.standard_normal((3, 3, c, o), dtype=np.float32)
    dy = rng.standard_normal((n, h, w, o), dtype=np.float32)
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME"}
    fwd = kernel("Conv2D", **attrs)
    bwd_in = kernel("Conv2DBackpropInput", **attrs)
    bwd_f = kernel("Conv2DBackpropFilter", **attrs)
    xs, fs = np.array(x.shape, np.int32), np.array(f.shape, np.int32)
    out = {"forward": median_ms(lambda: fwd(x, f), repeat),
           "backprop_input": median_ms(lambda: bwd_in(xs, f, dy), repeat),
           "backprop_filter": median_ms(lambda: bwd_f(x, fs, dy), repeat)}
    out["total"] = sum(out.values())
    return {k: round(v, 3) for k, v in out.items()}


def pool_case(repeat) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 28, 28, 32), dtype=np.float32)
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    pool = kernel("MaxPool", **attrs)
    grad = kernel("MaxPoolGrad", **attrs)
    y = pool(x)
    dy = rng.standard_normal(y.shape, dtype=np.float32)
    return {"max_pool": round(median_ms(lambda: pool(x), repeat), 3),
            "max_pool_grad": round(median_ms(lambda: grad(x, y, dy), repeat), 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    result = {
        "conv_64x28x28x1_to_32_ms": conv_case(64, 28, 28, 1, 32, args.repeat),
        "conv_64x14x14x32_to_64_ms": conv_case(64, 14, 14, 32, 64, args.repeat),
        "pool_64x28x28x32_2x2_ms": pool_case(args.repeat),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
