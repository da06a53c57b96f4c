"""float32 NHWC convolution through the compiled loops of `native`, a few images at a time.

A whole batch's patch matrix is large (conv2 of the benchmark CNN: 64 images, 14.4 MB), so
building it and multiplying it are two trips through memory. Here each group of images gets
its own patch matrix of about `CHUNK_FLOATS` floats, which is still in cache when BLAS reads
it (and the output chunk still is when the bias and activation run over it): the forward
conv of that CNN takes ~3.4 ms instead of ~4.5 ms when the caches start cold, as they do in
a training step. Images are independent in the forward pass and the input gradient; the
filter gradient sums one GEMM per group, in group order. In pool mode (`parallel.pool_mode`)
the groups are shared out to the kernel threads, each running single-threaded GEMMs on patch
matrices in its own core's cache (conv2 forward 3.8 -> 2.8 ms alone).

Callers (`conv_impl`) check `native.usable` and that the convolution is ungrouped; these
functions assume it. Results equal the whole-batch computation up to summation order.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorweave.ops.nn_geometry import Window2D
from tensorweave.runtime.kernels.cpu import native, parallel

CHUNK_FLOATS = 1 << 18     # ~1 MiB of patch matrix per group: L2-sized


def image_groups(n: int, win: Window2D, c: int) -> list[tuple[int, int]]:
    """[start, stop) image ranges whose patch matrices hold about CHUNK_FLOATS floats."""
    per_image = max(win.out_h * win.out_w * win.k_h * win.k_w * c, 1)
    step = max(1, CHUNK_FLOATS // per_image)
    return [(a, min(a + step, n)) for a in range(0, n, step)]


_scratch = threading.local()


SCRATCH_MAX_FLOATS = 1 << 22   # a thread keeps its scratch buffer up to 16 MiB


def _patches(x: np.ndarray, win: Window2D) -> np.ndarray:
    """im2col of an image group into this thread's scratch buffer (reused by every group, so
    it stays in cache; the caller is done with it before the next call). A group too large to
    keep (one huge image) gets a buffer of its own."""
    n, _, _, c = x.shape
    size = n * win.out_h * win.out_w * win.k_h * win.k_w * c
    if size > SCRATCH_MAX_FLOATS:
        return native.im2col(x, win)
    buf = getattr(_scratch, "buf", None)
    if buf is None or buf.size < size:
        buf = _scratch.buf = np.empty(max(size, CHUNK_FLOATS), np.float32)
    out = buf[:size].reshape(n * win.out_h * win.out_w, -1)
    return native.im2col(x, win, out=out)


def _each_group(groups: list[tuple[int, int]], fn) -> None:
    """fn(k, start, stop) for each image group k, in pool mode spread over the kernel threads
    (`parallel.spread`): each builds its patch matrices in its own core's cache and runs
    single-threaded GEMMs on them; otherwise BLAS threads each GEMM."""
    def run(lo: int, hi: int) -> None:
        for k in range(lo, hi):
            fn(k, *groups[k])

    parallel.spread(len(groups), run)


def conv2d(x: np.ndarray, w: np.ndarray, win: Window2D, bias=None, act=None) -> np.ndarray:
    """act(conv2d(x, w) + bias) (bias/act optional): x (N,H,W,C), w (KH,KW,C,O)."""
    n, _, _, c = x.shape
    out_c = w.shape[3]
    w2 = w.reshape(-1, out_c)
    y = np.empty((n, win.out_h, win.out_w, out_c), np.float32)

    def group(_k: int, a: int, b: int) -> None:
        part = y[a:b].reshape(-1, out_c)
        np.dot(_patches(x[a:b], win), w2, out=part)
        if bias is not None or act is not None:
            native.bias_act(part, bias, act)

    _each_group(image_groups(n, win, c), group)
    return y


def backprop_filter(x: np.ndarray, dy: np.ndarray, win: Window2D) -> np.ndarray:
    """d(conv2d)/d(filter) = sum over image groups of cols.T @ dy: (KH,KW,C,O). The groups'
    products are added in group order, whichever thread made them (repeatable results)."""
    n, _, _, c = x.shape
    out_c = dy.shape[3]
    groups = image_groups(n, win, c)
    parts: list = [None] * len(groups)

    def group(k: int, a: int, b: int) -> None:
        parts[k] = np.dot(_patches(x[a:b], win).T, dy[a:b].reshape(-1, out_c))

    _each_group(groups, group)
    dw = parts[0]
    for p in parts[1:]:
        dw += p
    return dw.reshape(win.k_h, win.k_w, c, out_c)


def backprop_input(dy: np.ndarray, w: np.ndarray, input_shape, win: Window2D) -> np.ndarray:
    """d(conv2d)/d(input): col2im(dy @ W.T) per image group, into an (N,H,W,C) array."""
    n, _, _, c = input_shape
    out_c = w.shape[3]
    wt = w.reshape(-1, out_c).T
    dx = np.empty((n, win.in_h, win.in_w, c), np.float32)

    def group(_k: int, a: int, b: int) -> None:
        native.col2im(np.dot(dy[a:b].reshape(-1, out_c), wt), win, b - a, c, out=dx[a:b])

    _each_group(image_groups(n, win, c), group)
    return dx
