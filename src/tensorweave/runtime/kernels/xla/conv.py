"""Lowerings of Conv2D and its two backprops, MaxPool/AvgPool and their gradients, and
FusedBatchNorm (V1-V3) with its gradient.

Convolutions are `lax.conv_general_dilated` in the node's data format (HWIO filters, grouped
when the input depth is a multiple of the filter's); the backprops and pooling gradients are
the vjp of the forward computation, which XLA compiles to the transposed convolution /
select-and-scatter TF's XLA kernels emit. Batch norm follows cpu/nn_norm.py: float32
arithmetic, biased variance to normalize, the unbiased one as output.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import register_lowering


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def _ints(v) -> tuple[int, ...]:
    return tuple(int(i) for i in np.ravel(v))


class _Geometry:
    """A 2-D window op's attrs in lax's terms (NHWC or NCHW)."""

    def __init__(self, node):
        self.fmt = node.attr("data_format") or "NHWC"
        if self.fmt not in ("NHWC", "NCHW"):
            raise _invalid(f"{node.op}: data_format {self.fmt} is not supported")
        self.spatial = (1, 2) if self.fmt == "NHWC" else (2, 3)
        self.strides = tuple(node.attr("strides") or (1, 1, 1, 1))
        self.dilations = tuple(node.attr("dilations") or (1, 1, 1, 1))
        self.padding = node.attr("padding")
        self.ksize = tuple(node.attr("ksize") or ())
        explicit = list(node.attr("explicit_paddings") or [])
        self.explicit = [(explicit[2 * d], explicit[2 * d + 1]) for d in self.spatial] \
            if self.padding == "EXPLICIT" else None

    def conv(self, x, w):
        _, _, lax = jax_modules()
        depth = x.shape[self.spatial[1] + 1 if self.fmt == "NHWC" else 1]
        if w.ndim != 4 or w.shape[2] == 0 or depth % w.shape[2]:
            raise _invalid(f"Conv2D: input depth must be evenly divisible by filter depth: "
                           f"{depth} vs {w.shape[2] if w.ndim == 4 else list(w.shape)}")
        return lax.conv_general_dilated(
            x, w, tuple(self.strides[d] for d in self.spatial),
            self.explicit or self.padding,
            rhs_dilation=tuple(self.dilations[d] for d in self.spatial),
            dimension_numbers=(self.fmt, "HWIO", self.fmt),
            feature_group_count=depth // w.shape[2])

    def input_shape(self, sizes, like_batch, depth) -> tuple[int, ...]:
        s = _ints(sizes)
        if len(s) == 2:
            h, w = s
            return (like_batch, h, w, depth) if self.fmt == "NHWC" else (like_batch, depth, h, w)
        return s

    def pool(self, x, init, op):
        _, _, lax = jax_modules()
        padding = self.padding
        if self.explicit is not None:
            padding = [(0, 0)] * 4
            for d, pair in zip(self.spatial, self.explicit):
                padding[d] = pair
        return lax.reduce_window(x, init, op, self.ksize, self.strides, padding)


@register_lowering("Conv2D")
def _conv2d(node):
    g = _Geometry(node)
    return g.conv


def _vjp(fn, primal, cotangent):
    jax = jax_modules()[0]
    _, pullback = jax.vjp(fn, primal)
    return pullback(cotangent.astype(primal.dtype))[0]


@register_lowering("Conv2DBackpropInput", const_inputs=(0,))
def _conv2d_backprop_input(node):
    g = _Geometry(node)
    _, jnp, _ = jax_modules()

    def run(input_sizes, w, dy):
        depth = w.shape[2] if w.ndim == 4 else 0
        shape = g.input_shape(input_sizes, dy.shape[0], depth)
        return _vjp(lambda x: g.conv(x, w), jnp.zeros(shape, dy.dtype), dy)

    return run


@register_lowering("Conv2DBackpropFilter", const_inputs=(1,))
def _conv2d_backprop_filter(node):
    g = _Geometry(node)
    _, jnp, _ = jax_modules()

    def run(x, filter_sizes, dy):
        return _vjp(lambda w: g.conv(x, w), jnp.zeros(_ints(filter_sizes), x.dtype), dy)

    return run


def _lowest(dtype):
    dt = np.dtype(dtype)
    return np.array(-np.inf if dt.kind == "f" else np.iinfo(dt).min, dt)


def _max_pool_fn(g):
    _, _, lax = jax_modules()
    return lambda x: g.pool(x, _lowest(x.dtype), lax.max)


def _avg_pool_fn(g):
    """Window sums over the number of in-bounds elements (TF excludes the padding)."""
    _, jnp, lax = jax_modules()

    def run(x):
        total = g.pool(x, np.array(0, x.dtype), lax.add)
        ones = jnp.ones(x.shape[1:3] if g.fmt == "NHWC" else x.shape[2:], x.dtype)
        ones = ones[None, :, :, None] if g.fmt == "NHWC" else ones[None, None]
        count = g.pool(ones, np.array(0, x.dtype), lax.add)
        return total / count

    return run


@register_lowering("MaxPool")
def _max_pool(node):
    return _max_pool_fn(_Geometry(node))


@register_lowering("AvgPool")
def _avg_pool(node):
    return _avg_pool_fn(_Geometry(node))


def _pads(g, x) -> list[tuple[int, int]]:
    """(low, high) padding per dimension of a window op on `x`."""
    _, _, lax = jax_modules()
    if g.explicit is not None:
        pads = [(0, 0)] * 4
        for d, pair in zip(g.spatial, g.explicit):
            pads[d] = pair
        return pads
    return list(lax.padtype_to_pads(x.shape, g.ksize, g.strides, g.padding))


def _max_pool_grad_fn(g):
    """dy routed to the first maximum of each window (TF's tie rule), built from one strided
    slice and one interior-padded add per window offset.

    NOTE: not the vjp of reduce_window (XLA's select-and-scatter): that compiles ~3 s per
    pooling layer on the CPU; this compiles in a fraction and ties go where TF sends them.
    """
    _, jnp, lax = jax_modules()

    def run(x, y, dy):
        pads = _pads(g, x)
        xp = lax.pad(x, _lowest(x.dtype), [(lo, hi, 0) for lo, hi in pads])
        out = dy.shape
        taken = jnp.zeros(out, bool)
        dxp = jnp.zeros(xp.shape, dy.dtype)
        for offset in np.ndindex(*g.ksize):
            start = offset
            limit = [o + (n - 1) * s + 1 for o, n, s in zip(offset, out, g.strides)]
            part = lax.slice(xp, start, limit, g.strides)
            hit = (part == y) & ~taken
            taken = taken | hit
            grad = jnp.where(hit, dy, jnp.zeros_like(dy))
            dxp = dxp + lax.pad(grad, np.array(0, dy.dtype),
                                [(o, size - lim, s - 1) for o, size, lim, s in
                                 zip(offset, xp.shape, limit, g.strides)])
        return lax.slice(dxp, [lo for lo, _ in pads],
                         [lo + n for (lo, _), n in zip(pads, x.shape)])

    return run


@register_lowering("MaxPoolGrad")
def _max_pool_grad(node):
    return _max_pool_grad_fn(_Geometry(node))


@register_lowering("AvgPoolGrad", const_inputs=(0,))
def _avg_pool_grad(node):
    pool = _avg_pool_fn(_Geometry(node))
    _, jnp, _ = jax_modules()
    return lambda shape, dy: _vjp(pool, jnp.zeros(_ints(shape), dy.dtype), dy)


# -- batch norm ------------------------------------------------------------------------------
class _Norm:
    def __init__(self, node):
        fmt = node.attr("data_format") or "NHWC"
        self.channels_first = fmt.startswith("NC")
        self.eps = float(node.attr("epsilon"))
        self.training = bool(node.attr("is_training"))
        self.factor = float(node.attr("exponential_avg_factor", 1.0) or 1.0)
        self.dtype = np.dtype(node.output_dtypes[0].np_dtype)
        self.udtype = np.dtype(node.output_dtypes[1].np_dtype)

    def shape(self, v, x):
        """A per-channel vector shaped to broadcast against `x`."""
        _, jnp, _ = jax_modules()
        if self.channels_first:
            return jnp.reshape(v, (1, -1) + (1,) * (x.ndim - 2))
        return v

    def axes(self, x) -> tuple[int, ...]:
        return tuple(a for a in range(x.ndim) if a != (1 if self.channels_first else x.ndim - 1))


def _check_channels(x, channels_first: bool, **vectors) -> None:
    c = x.shape[1 if channels_first else -1]
    for name, v in vectors.items():
        if tuple(v.shape) != (c,):
            raise _invalid(f"{name} must have the same number of elements as the channels of "
                           f"x, got {v.shape[0] if v.ndim == 1 else list(v.shape)} and {c}")


def _batch_norm(v3: bool):
    def factory(node):
        p = _Norm(node)
        _, jnp, _ = jax_modules()

        def run(x, scale, offset, mean, variance):
            f32 = [jnp.asarray(v, np.float32) for v in (x, scale, offset, mean, variance)]
            x32, scale, offset, mean, variance = f32
            _check_channels(x32, p.channels_first, scale=scale, offset=offset)
            if p.training:
                axes = p.axes(x32)
                n = int(np.prod([x32.shape[a] for a in axes]))
                b_mean = jnp.mean(x32, axis=axes)
                b_var = jnp.mean(jnp.square(x32 - p.shape(b_mean, x32)), axis=axes)
                unbiased = b_var * (n / max(n - 1, 1))
                if p.factor != 1.0:
                    new_mean = (1 - p.factor) * mean + p.factor * b_mean
                    new_var = (1 - p.factor) * variance + p.factor * unbiased
                else:
                    new_mean, new_var = b_mean, unbiased
                use_mean, use_var, vecs = b_mean, b_var, (new_mean, new_var, b_mean, b_var)
            else:
                _check_channels(x32, p.channels_first, mean=mean, variance=variance)
                use_mean, use_var, vecs = mean, variance, (mean, variance, mean, variance)
            inv = scale / jnp.sqrt(use_var + p.eps)
            y = (x32 - p.shape(use_mean, x32)) * p.shape(inv, x32) + p.shape(offset, x32)
            out = (y.astype(p.dtype),) + tuple(v.astype(p.udtype) for v in vecs)
            return out + (jnp.zeros((0,), p.udtype),) if v3 else out

        return run

    return factory


register_lowering("FusedBatchNorm")(_batch_norm(False))
register_lowering("FusedBatchNormV2")(_batch_norm(False))
register_lowering("FusedBatchNormV3")(_batch_norm(True))


def _batch_norm_grad(node):
    p = _Norm(node)
    _, jnp, _ = jax_modules()

    def run(dy, x, scale, mean, variance, *_reserve_space_3):
        dy32, x32, scale, mean, variance = (jnp.asarray(v, np.float32)
                                            for v in (dy, x, scale, mean, variance))
        _check_channels(x32, p.channels_first, scale=scale, reserve_space_1=mean,
                        reserve_space_2=variance)
        axes = p.axes(x32)
        inv = 1 / jnp.sqrt(variance + p.eps)
        x_hat = (x32 - p.shape(mean, x32)) * p.shape(inv, x32)
        d_offset = jnp.sum(dy32, axis=axes)
        d_scale = jnp.sum(dy32 * x_hat, axis=axes)
        if p.training:
            n = int(np.prod([x32.shape[a] for a in axes]))
            dx = p.shape(scale * inv, x32) * (dy32 - p.shape(d_offset / n, x32)
                                              - x_hat * p.shape(d_scale / n, x32))
        else:
            dx = dy32 * p.shape(scale * inv, x32)
        empty = jnp.zeros((0,), p.udtype)
        return (dx.astype(p.dtype), d_scale.astype(p.udtype), d_offset.astype(p.udtype),
                empty, empty)

    return run


for _op in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
    register_lowering(_op)(_batch_norm_grad)
