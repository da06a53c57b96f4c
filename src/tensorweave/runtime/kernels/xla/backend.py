"""The XLA device's backend: JAX, imported only when an XLA partition is built.

`available()` answers without importing jax (a `find_spec`), so sessions on machines with jax
installed pay nothing until they place work on the XLA device. `jax_modules()` imports jax
once, with 64-bit types enabled (TF graphs use int64 and float64; jax would silently narrow
them otherwise).

Compiled executables can be kept across processes in jax's persistent compilation cache:
set `TENSORWEAVE_XLA_CACHE_DIR` to a directory (e.g. `~/.cache/tensorweave/xla`) and a
program's second run loads its executables instead of compiling them (off by default: the
cache grows without bound, and a first run compiles as before).
"""

from __future__ import annotations

import functools
import importlib.util
import os

# The device types lowerings register for: XLA_CPU wherever jax is installed, GPU and XLA_GPU
# where jax sees a CUDA device (a GPU's kernels are lowerings too: its partitions compile).
XLA_DEVICE_TYPES = ("XLA_CPU", "XLA_GPU", "GPU")
# A directory for jax's persistent compilation cache (unset: none).
CACHE_DIR_ENV = "TENSORWEAVE_XLA_CACHE_DIR"


def is_compiled(device_type: str | None) -> bool:
    """Whether partitions on `device_type` run as XLA executables."""
    return device_type in XLA_DEVICE_TYPES


def is_compiled_device(name: str) -> bool:
    """`is_compiled` for a device name (`/job:.../device:XLA_CPU:0`)."""
    kind = name.rsplit("/device:", 1)[-1].split(":")[0] if "/device:" in name else ""
    return is_compiled(kind.upper())


def available() -> bool:
    """Whether jax is installed (nothing is imported)."""
    return importlib.util.find_spec("jax") is not None


@functools.cache
def jax_modules():
    """(jax, jax.numpy, jax.lax), imported once with x64 enabled."""
    import jax

    jax.config.update("jax_enable_x64", True)
    cache_dir = os.environ.get(CACHE_DIR_ENV)
    if cache_dir:
        jax.config.update("jax_compilation_cache_dir", os.path.expanduser(cache_dir))
        # NOTE: every executable: most take 0.05-1 s to compile on the CPU, under jax's 1 s
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    import jax.numpy as jnp
    from jax import lax

    return jax, jnp, lax


@functools.cache
def gpu_count() -> int:
    """CUDA devices jax sees (0 without a GPU or a CUDA jaxlib)."""
    if not available():
        return 0
    jax = jax_modules()[0]
    try:
        return len(jax.devices("gpu"))
    except RuntimeError:
        return 0


def device_names(job: str, task: int) -> list[str]:
    """This process's XLA devices: XLA_CPU:0 when jax is installed, GPU:i and XLA_GPU:i per
    CUDA GPU (both compile on that GPU: TF names the same chip both ways).

    NOTE: GPUs are looked up only if jax has a CUDA plugin installed, so a CPU-only machine
    never imports jax here.
    """
    if not available():
        return []
    prefix = f"/job:{job}/replica:0/task:{task}/device:"
    names = [prefix + "XLA_CPU:0"]
    if importlib.util.find_spec("jax_cuda12_plugin") or importlib.util.find_spec(
            "jax_cuda13_plugin"):
        n = gpu_count()
        names += [f"{prefix}GPU:{i}" for i in range(n)] + [f"{prefix}XLA_GPU:{i}"
                                                            for i in range(n)]
    return names


def jax_device(device_type: str):
    """The jax device a partition on `device_type` runs on."""
    jax = jax_modules()[0]
    return jax.devices("gpu" if device_type in ("XLA_GPU", "GPU") else "cpu")[0]
