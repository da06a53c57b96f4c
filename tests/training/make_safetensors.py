"""Writes tests/data/pretrained/reference.safetensors with the reference implementation
(safetensors 0.8.0, numpy API) and the same arrays as reference.npz, so tests can check that
our hand-written reader reads it and our writer reproduces it byte for byte.

Run with any Python that has `safetensors` and numpy (tests never need safetensors):

    python -m venv /tmp/st && /tmp/st/bin/pip install safetensors==0.8.0 numpy
    /tmp/st/bin/python tests/training/make_safetensors.py
"""

import os

import numpy as np
from safetensors.numpy import save_file

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pretrained")


def arrays() -> dict:
    rng = np.random.default_rng(5)
    return {
        "dense/kernel": rng.standard_normal((3, 2)).astype(np.float32),
        "dense/bias": np.array([0.5, -1.25], np.float16),
        "step": np.array(41, np.int64),
        "mask": np.array([[True, False], [False, True]]),
        "emb": np.arange(4, dtype=np.uint8),
        "scale": np.array([2.0], np.float64),
    }


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    a = arrays()
    save_file(a, os.path.join(OUT, "reference.safetensors"), metadata={"format": "np"})
    np.savez(os.path.join(OUT, "reference.npz"), **a)


if __name__ == "__main__":
    main()
