"""CPU kernels for FusedBatchNorm (V1-V3) and FusedBatchNormGrad (V1-V3), as TF's CPU kernels.

Training: normalize with the biased batch variance; output the batch mean and the UNBIASED
batch variance (blended as (1 - f) * running + f * batch when exponential_avg_factor f != 1);
reserve_space_1/2 hold the batch mean and the biased variance for the gradient. Inference:
normalize with the given mean and variance and pass them through. Arithmetic runs in float32;
with the compiled helper (`native`), float32 training passes take their per-channel sums in
float64 in one pass over the data (numpy's path: float32 means, several passes).
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu import native
from tensorweave.runtime.kernels.registry import register_kernel


class _Layout:
    """Moves the channel axis last and flattens to (rows, C), and back."""

    def __init__(self, node):
        fmt = node.attr("data_format") or "NHWC"
        self.channels_first = fmt.startswith("NC")
        self.rank = 5 if fmt in ("NDHWC", "NCDHW") else 4
        self.eps = float(node.attr("epsilon"))
        self.training = bool(node.attr("is_training"))
        self.dtype = node.output_dtypes[0].np_dtype
        self.udtype = node.output_dtypes[1].np_dtype

    def rows(self, x) -> np.ndarray:
        x = np.asarray(x)
        if x.ndim != self.rank:
            raise errors.InvalidArgumentError(
                None, None, f"input must be {self.rank}-dimensional{list(x.shape)}")
        if self.channels_first:
            x = np.moveaxis(x, 1, -1)
        return x.astype(np.float32, copy=False).reshape(-1, x.shape[-1])

    def back(self, rows: np.ndarray, like: np.ndarray) -> np.ndarray:
        shape = like.shape
        if self.channels_first:
            out = rows.reshape((shape[0],) + shape[2:] + (shape[1],))
            out = np.ascontiguousarray(np.moveaxis(out, -1, 1))
        else:
            out = rows.reshape(shape)
        return out.astype(self.dtype, copy=False)

    def vec(self, v) -> np.ndarray:
        return np.asarray(v, dtype=np.float32)

    def out_vec(self, v) -> np.ndarray:
        return np.asarray(v).astype(self.udtype, copy=False)


def _check_vectors(channels: int, **vectors) -> None:
    for name, v in vectors.items():
        if v.shape != (channels,):
            raise errors.InvalidArgumentError(
                None, None, f"{name} must have the same number of elements as the channels of "
                            f"x, got {v.shape[0] if v.ndim == 1 else list(v.shape)} and "
                            f"{channels}")


def _batch_norm(node, v3: bool):
    p = _Layout(node)
    factor = float(node.attr("exponential_avg_factor", 1.0))

    def run(x, scale, offset, mean, variance):
        x = np.asarray(x)
        x2 = p.rows(x)
        channels = x2.shape[1]
        scale, offset = p.vec(scale), p.vec(offset)
        _check_vectors(channels, scale=scale, offset=offset)
        if p.training:
            outs = _train(p, x2, scale, offset, p.vec(mean), p.vec(variance), factor)
        else:
            mean, variance = p.vec(mean), p.vec(variance)
            _check_vectors(channels, mean=mean, variance=variance)
            y = (x2 - mean) * (scale / np.sqrt(variance + p.eps)) + offset
            outs = (y, mean, variance, mean, variance)
        y, *vecs = outs
        result = (p.back(y, x), *(p.out_vec(v) for v in vecs))
        return (*result, np.zeros((0,), p.udtype)) if v3 else result

    return run


def _train(p: _Layout, x2, scale, offset, run_mean, run_var, factor: float):
    n = x2.shape[0]
    if native.usable(x2) and n:
        total, squares = native.channel_sums(x2, x2, np.zeros(x2.shape[1], np.float32))
        mean64 = total / n
        batch_mean = mean64.astype(np.float32)
        batch_var = np.maximum(squares / n - mean64 * mean64, 0).astype(np.float32)
        y = native.bn_forward(x2, batch_mean, scale / np.sqrt(batch_var + p.eps), offset)
    else:
        batch_mean = x2.mean(axis=0)
        centered = x2 - batch_mean
        batch_var = np.square(centered).mean(axis=0)
        y = centered * (scale / np.sqrt(batch_var + p.eps)) + offset
    unbiased = batch_var * (n / max(n - 1, 1))
    if factor == 1.0:
        new_mean, new_var = batch_mean, unbiased
    else:
        _check_vectors(x2.shape[1], mean=run_mean, variance=run_var)
        new_mean = (1 - factor) * run_mean + factor * batch_mean
        new_var = (1 - factor) * run_var + factor * unbiased
    return y, new_mean, new_var, batch_mean, batch_var


register_kernel("FusedBatchNorm")(lambda node: _batch_norm(node, v3=False))
register_kernel("FusedBatchNormV2")(lambda node: _batch_norm(node, v3=False))
register_kernel("FusedBatchNormV3")(lambda node: _batch_norm(node, v3=True))


def _batch_norm_grad(node):
    p = _Layout(node)

    def run(dy, x, scale, mean, variance, *_reserve_space_3):
        x = np.asarray(x)
        dy2, x2 = p.rows(dy), p.rows(x)
        scale, mean, variance = p.vec(scale), p.vec(mean), p.vec(variance)
        _check_vectors(x2.shape[1], scale=scale, reserve_space_1=mean, reserve_space_2=variance)
        inv = 1 / np.sqrt(variance + p.eps)
        if p.training and native.usable(dy2, x2) and x2.shape[0]:
            d_offset, d_scale, dx = _grad_native(dy2, x2, scale, mean, inv)
        else:
            x_hat = (x2 - mean) * inv
            d_offset = dy2.sum(axis=0)
            d_scale = np.einsum("ij,ij->j", dy2, x_hat)
            if p.training:
                n = x2.shape[0]
                dx = (scale * inv) * (dy2 - d_offset / n - x_hat * (d_scale / n))
            else:
                dx = dy2 * (scale * inv)
        empty = np.zeros((0,), p.udtype)
        return p.back(dx, x), p.out_vec(d_scale), p.out_vec(d_offset), empty, empty

    return run


def _grad_native(dy2, x2, scale, mean, inv):
    """(d_offset, d_scale, dx) of a training batch norm: one pass for the two sums, one for dx."""
    n = x2.shape[0]
    sum_dy, sum_dy_xc = native.channel_sums(dy2, x2, mean)
    d_offset = sum_dy.astype(np.float32)
    d_scale = (sum_dy_xc * inv).astype(np.float32)
    dx = native.bn_backward(dy2, x2, mean, inv, scale * inv, d_offset / n, d_scale / n)
    return d_offset, d_scale, dx


for _op in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
    register_kernel(_op)(_batch_norm_grad)
