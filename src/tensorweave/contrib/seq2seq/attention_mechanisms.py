"""`tf.contrib.seq2seq` attention mechanisms (TF 1.15's attention_wrapper.py, first half):
`BahdanauAttention` (additive: v·tanh(W₁keys + W₂query)) and `LuongAttention`
(multiplicative: query·keysᵀ). The memory [batch, time, depth] is masked past
`memory_sequence_length` and projected once by `memory_layer` (variable
`memory_layer/kernel`); scores past the lengths get `score_mask_value` (-inf) before the
softmax. Per query, `mechanism(query, state)` returns (alignments, next_state)."""

from __future__ import annotations

import math

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    creation_ops,
    gather_ops,
    init_ops,
    joining_ops,
    math_matmul_ops,
    math_ops,
    reduction_ops,
)
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.control_flow_util import flatten, map_structure


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined):
    """Zeros the memory past each sequence's length.

    Raises:
      ValueError: `memory`'s inner dimensions are unknown (with check_inner_dims_defined).
    """
    memory = map_structure(lambda m: convert_to_tensor(m, name="memory"), memory)
    if check_inner_dims_defined:
        for m in flatten(memory):
            if not m.shape[2:].is_fully_defined():
                raise ValueError(f"Expected memory {m.name} to have fully defined inner "
                                 f"dims, but saw shape: {m.shape}")
    if memory_sequence_length is None:
        return memory
    lengths = convert_to_tensor(memory_sequence_length, name="memory_sequence_length")

    def mask(m):
        seq_mask = creation_ops.sequence_mask(lengths, maxlen=array_ops.shape(m)[1],
                                              dtype=m.dtype)
        extra = [1] * (m.shape.ndims - 2)
        if extra:
            seq_mask = array_ops.reshape(seq_mask, joining_ops.concat(
                [array_ops.shape(seq_mask), convert_to_tensor(extra, dtypes.int32)], 0))
        return m * seq_mask

    return map_structure(mask, memory)


def _maybe_mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    score_mask = creation_ops.sequence_mask(memory_sequence_length,
                                            maxlen=array_ops.shape(score)[1])
    masked = score_mask_value * creation_ops.ones_like(score)
    return gather_ops.where(score_mask, score, masked)


def _dim(tensor, axis):
    static = tensor.shape[axis]
    static = getattr(static, "value", static)
    return static if static is not None else array_ops.shape(tensor)[axis]


class _BaseAttentionMechanism:
    """Holds `values` (the masked memory), `keys` (memory_layer(values)), `batch_size`,
    `alignments_size` (memory time) and the masked probability function."""

    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, check_inner_dims_defined=True, score_mask_value=None,
                 name=None):
        self._query_layer, self._memory_layer = query_layer, memory_layer
        self.dtype = memory_layer.dtype if memory_layer is not None else None
        if score_mask_value is None:
            score_mask_value = np.float32(-np.inf)
        self._probability_fn = lambda score, prev: probability_fn(
            _maybe_mask_score(score, memory_sequence_length, score_mask_value), prev)
        with name_scope(name, "BaseAttentionMechanismInit", flatten(memory)):
            self._values = _prepare_memory(memory, memory_sequence_length,
                                           check_inner_dims_defined)
            self._keys = self._memory_layer(self._values) if self._memory_layer \
                else self._values
            self._batch_size = _dim(self._keys, 0)
            self._alignments_size = _dim(self._keys, 1)

    memory_layer = property(lambda self: self._memory_layer)
    query_layer = property(lambda self: self._query_layer)
    values = property(lambda self: self._values)
    keys = property(lambda self: self._keys)
    batch_size = property(lambda self: self._batch_size)
    alignments_size = property(lambda self: self._alignments_size)
    state_size = property(lambda self: self._alignments_size)

    def initial_alignments(self, batch_size, dtype):
        """Zeros [batch_size, alignments_size]."""
        from tensorweave.training.rnn.cell_base import zero_state_tensors

        return zero_state_tensors(self._alignments_size, batch_size, dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


def _dense(units, name, dtype):
    from tensorweave.training.layers.core import Dense

    return Dense(units, name=name, use_bias=False, dtype=dtype)


def _softmax(score, _=None):
    from tensorweave.ops import nn_ops

    return nn_ops.softmax(score)


def _bahdanau_score(processed_query, keys, normalize):
    dtype = processed_query.dtype
    num_units = keys.shape[2]
    num_units = getattr(num_units, "value", num_units) or array_ops.shape(keys)[2]
    processed_query = array_ops.expand_dims(processed_query, 1)
    v = vs.get_variable("attention_v", [num_units], dtype=dtype)
    if not normalize:
        return reduction_ops.reduce_sum(v * math_ops.tanh(keys + processed_query), [2])
    g = vs.get_variable("attention_g", dtype=dtype, shape=(),
                        initializer=init_ops.constant_initializer(math.sqrt(1.0 / num_units)))
    b = vs.get_variable("attention_b", [num_units], dtype=dtype,
                        initializer=init_ops.zeros_initializer())
    normed_v = g * v * math_ops.rsqrt(reduction_ops.reduce_sum(math_ops.square(v)))
    return reduction_ops.reduce_sum(normed_v * math_ops.tanh(keys + processed_query + b), [2])


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention; variables `memory_layer/kernel`, and (at the first query, under
    the caller's scope) `bahdanau_attention/query_layer/kernel` and
    `bahdanau_attention/attention_v` (+ `attention_g`, `attention_b` with `normalize`)."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="BahdanauAttention"):
        probability_fn = probability_fn or _softmax
        dtype = dtype or dtypes.float32
        super().__init__(query_layer=_dense(num_units, "query_layer", dtype), memory=memory,
                         probability_fn=lambda score, _: probability_fn(score),
                         memory_sequence_length=memory_sequence_length,
                         memory_layer=_dense(num_units, "memory_layer", dtype),
                         score_mask_value=score_mask_value, name=name)
        self._num_units, self._normalize, self._name = num_units, normalize, name

    def __call__(self, query, state):
        with vs.variable_scope(None, "bahdanau_attention", [query]):
            processed = self.query_layer(query) if self.query_layer else query
            score = _bahdanau_score(processed, self._keys, self._normalize)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _luong_score(query, keys, scale):
    depth, key_units = query.shape[-1], keys.shape[-1]
    if depth != key_units:
        raise ValueError(f"Incompatible or unknown inner dimensions between query and keys. "
                         f"Query ({query}) has units: {depth}. Keys ({keys}) have units: "
                         f"{key_units}. Perhaps you need to set num_units to the keys' "
                         f"dimension ({key_units})?")
    query = array_ops.expand_dims(query, 1)
    score = array_ops.squeeze(math_matmul_ops.matmul(query, keys, transpose_b=True), [1])
    return score if scale is None else scale * score


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention; variables `memory_layer/kernel` and, with `scale`,
    `luong_attention/attention_g`."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="LuongAttention"):
        probability_fn = probability_fn or _softmax
        dtype = dtype or dtypes.float32
        super().__init__(query_layer=None, memory=memory,
                         probability_fn=lambda score, _: probability_fn(score),
                         memory_sequence_length=memory_sequence_length,
                         memory_layer=_dense(num_units, "memory_layer", dtype),
                         score_mask_value=score_mask_value, name=name)
        self._num_units, self._scale, self._name = num_units, scale, name

    def __call__(self, query, state):
        with vs.variable_scope(None, "luong_attention", [query]):
            g = None
            if self._scale:
                g = vs.get_variable("attention_g", dtype=query.dtype, shape=(),
                                    initializer=init_ops.ones_initializer())
            score = _luong_score(query, self._keys, g)
        alignments = self._probability_fn(score, state)
        return alignments, alignments
