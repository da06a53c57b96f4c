"""`tf.contrib.seq2seq.AttentionWrapper` (TF 1.15): an RNN cell that feeds
`cell_input_fn(inputs, previous attention)` to the wrapped cell, attends over the memory
with the cell output as the query, and emits the attention (or the cell output). Variables
sit under the wrapper's scope (`attention_wrapper/<cell>/kernel`,
`attention_wrapper/attention_layer/kernel`, `attention_wrapper/bahdanau_attention/...`)."""

from __future__ import annotations

import collections

from tensorweave.contrib.seq2seq.attention_mechanisms import (  # noqa: F401
    BahdanauAttention,
    LuongAttention,
    _BaseAttentionMechanism,
)
from tensorweave.framework.scopes import name_scope
from tensorweave.ops import array_ops, creation_ops, joining_ops, math_matmul_ops
from tensorweave.ops.control_flow_util import map_structure
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.shapes import TensorShape
from tensorweave.training.rnn.cell_base import RNNCell, zero_state_tensors


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """The wrapper's state; `clone(**kwargs)` replaces fields."""

    def clone(self, **kwargs):
        return self._replace(**kwargs)


def _compute_attention(mechanism, cell_output, attention_state, attention_layer):
    alignments, next_state = mechanism(cell_output, state=attention_state)
    context = math_matmul_ops.matmul(array_ops.expand_dims(alignments, 1), mechanism.values)
    context = array_ops.squeeze(context, [1])
    if attention_layer is not None:
        attention = attention_layer(joining_ops.concat([cell_output, context], 1))
    else:
        attention = context
    return attention, alignments, next_state


def _concat_inputs(inputs, attention):
    return joining_ops.concat([inputs, attention], -1)


class AttentionWrapper(RNNCell):
    """Raises TypeError: a mechanism that is not an attention mechanism; ValueError:
    attention_layer_size and mechanisms of different counts."""

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None, attention_fn=None):
        super().__init__(name=name)
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for m in mechanisms:
            if not isinstance(m, _BaseAttentionMechanism):
                raise TypeError(f"attention_mechanism must be an AttentionMechanism or list "
                                f"of multiple AttentionMechanism instances, saw type: "
                                f"{type(m).__name__}")
        self._cell, self._mechanisms = cell, mechanisms
        self._cell_input_fn = cell_input_fn or _concat_inputs
        self._attention_layers, self._attention_layer_size = self._make_layers(
            attention_layer_size, attention_layer, mechanisms)
        self._alignment_history = alignment_history
        self._output_attention = output_attention
        self._initial_cell_state = initial_cell_state

    def _make_layers(self, sizes, layers, mechanisms):
        from tensorweave.training.layers.core import Dense

        if sizes is not None and layers is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should "
                             "be set")
        if sizes is not None:
            sizes = tuple(sizes) if isinstance(sizes, (list, tuple)) else (sizes,)
            if len(sizes) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer_size must contain exactly one "
                                 f"integer per attention_mechanism, saw: {len(sizes)} vs "
                                 f"{len(mechanisms)}")
            made = tuple(Dense(s, name="attention_layer", use_bias=False, dtype=m.dtype)
                         for s, m in zip(sizes, mechanisms))
            return made, sum(sizes)
        if layers is not None:
            layers = tuple(layers) if isinstance(layers, (list, tuple)) else (layers,)
            total = 0
            for layer, m in zip(layers, mechanisms):
                shape = TensorShape([None, self._cell.output_size
                                     + m.values.shape[-1]])
                total += layer.compute_output_shape(shape)[-1]
            return layers, total
        return None, sum(int(m.values.shape[-1]) for m in mechanisms)

    def _item_or_tuple(self, seq):
        seq = tuple(seq)
        return seq if self._is_multi else seq[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention \
            else self._cell.output_size

    @property
    def state_size(self):
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in self._mechanisms),
            attention_state=self._item_or_tuple(m.state_size for m in self._mechanisms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else ()
                for m in self._mechanisms))

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            cell_state = self._initial_cell_state if self._initial_cell_state is not None \
                else self._cell.zero_state(batch_size, dtype)
            cell_state = map_structure(
                lambda s: array_ops.identity(s, name="checked_cell_state"), cell_state)
            alignments = [m.initial_alignments(batch_size, dtype) for m in self._mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state, time=creation_ops.zeros([], dtype="int32"),
                attention=zero_state_tensors(self._attention_layer_size, batch_size, dtype),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(
                    m.initial_state(batch_size, dtype) for m in self._mechanisms),
                alignment_history=self._item_or_tuple(
                    TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                    if self._alignment_history else () for a in alignments))

    def call(self, inputs, state):
        """Raises TypeError: `state` is not an AttentionWrapperState."""
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(f"Expected state to be instance of AttentionWrapperState. "
                            f"Received type {type(state)} instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        multi = self._is_multi
        prev_states = state.attention_state if multi else [state.attention_state]
        prev_histories = state.alignment_history if multi else [state.alignment_history]
        attentions, alignments, states, histories = [], [], [], []
        for i, mechanism in enumerate(self._mechanisms):
            layer = self._attention_layers[i] if self._attention_layers else None
            attention, align, next_state = _compute_attention(mechanism, cell_output,
                                                              prev_states[i], layer)
            histories.append(prev_histories[i].write(state.time, align)
                             if self._alignment_history else ())
            attentions.append(attention)
            alignments.append(align)
            states.append(next_state)
        attention = joining_ops.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(states),
            alignments=self._item_or_tuple(alignments),
            alignment_history=self._item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state
