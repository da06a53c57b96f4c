"""Gradient clipping (`tf.clip_by_norm`, `tf.clip_by_global_norm`, `tf.global_norm`, ...).

TF1's functions and op names. Every function accepts `IndexedSlices` where TF does (clipping
their values, keeping indices and dense_shape); `clip_by_global_norm` keeps None entries, so
`clip_by_global_norm([g for g, _ in grads_and_vars], 5.0)` works on optimizer output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, gather_ops, joining_ops, math_ops, nn_ops, reduction_ops
from tensorweave.ops.constant_op import constant
from tensorweave.ops.creation_ops import ones_like
from tensorweave.ops.math_matmul_ops import clip_by_value as _dense_clip_by_value
from tensorweave.training.optimizer import is_indexed_slices, make_indexed_slices


def _values(t, name: str):
    return convert_to_tensor(t.values if is_indexed_slices(t) else t, name=name)


def _like(t, values):
    """`values` wrapped as `t` was (IndexedSlices stay IndexedSlices)."""
    if is_indexed_slices(t):
        return make_indexed_slices(values, t.indices, t.dense_shape)
    return values


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """`t` with values below `clip_value_min` / above `clip_value_max` set to those bounds."""
    if not is_indexed_slices(t):
        return _dense_clip_by_value(t, clip_value_min, clip_value_max, name=name)
    return _like(t, _dense_clip_by_value(t.values, clip_value_min, clip_value_max, name=name))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`t * clip_norm / max(l2norm(t), clip_norm)`, the L2 norm taken over `axes` (all by
    default): `t` unchanged when its norm is at most `clip_norm`. A negative clip_norm acts as
    0. The result is named `name` ("clip_by_norm")."""
    graph = get_default_graph()
    with graph.name_scope(name or "clip_by_norm") as scope:
        values = _values(t, "t")
        if np.isscalar(clip_norm):
            clip_norm = max(clip_norm, 0)
        else:
            clip_norm = math_ops.cast(math_ops.maximum(clip_norm, 0), dtype=values.dtype)
        l2sum = reduction_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        # NOTE: sqrt only of positive sums, so a zero tensor gets a finite gradient.
        l2sum_safe = gather_ops.where(pred, l2sum, ones_like(l2sum))
        l2norm = gather_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        values.shape.assert_is_compatible_with(intermediate.shape)
        values_clip = array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm),
                                         name=scope)
        return _like(t, values_clip)


def _check_list(t_list) -> list:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


def global_norm(t_list, name=None):
    """sqrt(sum of the squared L2 norms of the tensors of `t_list`); None entries are skipped.

    Raises:
      TypeError: `t_list` is not a sequence.
    """
    t_list = _check_list(t_list)
    graph = get_default_graph()
    with graph.name_scope(name or "global_norm"):
        values = [None if t is None else _values(t, f"t_{i}") for i, t in enumerate(t_list)]
        half_squared_norms = []
        for v in values:
            if v is not None:
                with graph.colocate_with(v.op):
                    half_squared_norms.append(nn_ops.l2_loss(v))
        half_squared_norm = reduction_ops.reduce_sum(joining_ops.stack(half_squared_norms))
        return math_ops.sqrt(
            half_squared_norm * constant(2.0, dtype=half_squared_norm.dtype), name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(`t_list` scaled by clip_norm / max(global_norm, clip_norm), the global norm).

    None entries stay None and IndexedSlices stay IndexedSlices. When the global norm is
    inf or nan every entry becomes nan (as in TF). `use_norm` replaces the computed norm.

    Raises:
      TypeError: `t_list` is not a sequence.
    """
    t_list = _check_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    graph = get_default_graph()
    with graph.name_scope(name or "clip_by_global_norm") as scope:
        one = constant(1.0, dtype=use_norm.dtype)
        scale_for_finite = clip_norm * math_ops.minimum(1.0 / use_norm, one / clip_norm)
        # NOTE: (use_norm - use_norm) is 0 for a finite norm and nan otherwise.
        scale = scale_for_finite + (use_norm - use_norm)
        values = [None if t is None else _values(t, f"t_{i}") for i, t in enumerate(t_list)]
        clipped = []
        for i, v in enumerate(values):
            if v is None:
                clipped.append(None)
                continue
            with graph.colocate_with(v.op):
                clipped.append(array_ops.identity(v * math_ops.cast(scale, v.dtype),
                                                  name=f"{scope}_{i}"))
        return [_like(t, c) for t, c in zip(t_list, clipped)], use_norm


def clip_by_average_norm(t, clip_norm, name=None):
    """`t * clip_norm / max(l2norm(t) / size(t), clip_norm)` (deprecated in TF)."""
    graph = get_default_graph()
    with graph.name_scope(name or "clip_by_average_norm") as scope:
        t = convert_to_tensor(t, name="t")
        n_element = math_ops.cast(array_ops.size(t), dtypes.float32)
        l2norm_inv = math_ops.rsqrt(reduction_ops.reduce_sum(t * t))
        return array_ops.identity(
            t * clip_norm * math_ops.minimum(l2norm_inv * n_element, constant(1.0) / clip_norm),
            name=scope)


__all__ = ["clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm",
           "clip_by_average_norm"]
