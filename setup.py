"""Builds tensorweave's one compiled helper (everything else is in pyproject.toml).

The extension is optional: without a C compiler the install still succeeds and the kernels
use their numpy paths (`tensorweave.runtime.kernels.cpu.native.BUILT` is then False).
"""

from setuptools import Extension, setup

NATIVE = "src/tensorweave/runtime/kernels/cpu/native/"

setup(ext_modules=[Extension(
    "tensorweave.runtime.kernels.cpu._native",
    sources=[NATIVE + f for f in ("module.c", "elementwise.c", "norm.c", "pool.c", "conv.c",
                                  "scatter.c", "softmax.c")],
    depends=[NATIVE + "native.h"],
    # NOTE: no FMA contraction, so every machine (and every ifunc clone) computes the same
    # bits as numpy does for the same sequence of float32 operations. No trapping math: no
    # loop relies on floating-point traps, and without it GCC keeps a branch for every
    # comparison of floats (no vectorized selects).
    extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
                        "-std=gnu11"],
    optional=True,
)])
