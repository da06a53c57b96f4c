"""`tf.contrib.seq2seq.BeamSearchDecoder` (TF 1.15's beam_search_decoder.py): keeps the
`beam_width` best partial sequences per batch entry by total log-probability (divided by the
GNMT length penalty ((5 + len) / 6) ** length_penalty_weight); finished beams only extend
with `end_token` at no cost. The initial cell state must come tiled with `tile_batch`
([batch * beam, ...]). `dynamic_decode` returns FinalBeamSearchDecoderOutput with
`predicted_ids` [batch, time, beam] backtracked by `gather_tree`.

TensorArrays in the cell state (an AttentionWrapper's alignment history) come back stacked
and reordered along the final beams (`reorder_tensor_arrays`). Not supported:
coverage_penalty_weight != 0."""

from __future__ import annotations

import collections

import numpy as np

from tensorweave import dtypes
from tensorweave.contrib.seq2seq.beam_search_ops import (  # noqa: F401
    gather_tree,
    gather_tree_from_array,
    tile_batch,
)
from tensorweave.contrib.seq2seq.decoder import Decoder
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    control_flow_ops,
    creation_ops,
    embedding_ops,
    gather_ops,
    joining_ops,
    math_ops,
    nn_ops,
    reduction_ops,
)
from tensorweave.ops.control_flow_util import flatten, map_structure
from tensorweave.ops.shape_inference import constant_value
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.shapes import TensorShape
from tensorweave.training.rnn.cell_base import assert_like_rnncell


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths",
                                   "accumulated_attention_probs"))):
    pass


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    pass


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamDecoderOutput", ["predicted_ids", "beam_search_decoder_output"])):
    pass


def _gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape):
    """gather_from[b, gather_indices[b, k], ...], keeping gather_from's leading dims."""
    with name_scope(None, "tensor_gather_helper"):
        offsets = array_ops.expand_dims(creation_ops.range(batch_size) * range_size, 1)
        indices = array_ops.reshape(gather_indices + offsets, [-1])
        flat_shape = joining_ops.stack([convert_to_tensor(d, dtype=dtypes.int32)
                                        for d in gather_shape])
        output = gather_ops.gather(array_ops.reshape(gather_from, flat_shape), indices)
        final_shape = array_ops.shape(gather_from)[:1 + len(gather_shape)]
        static_batch = constant_value(convert_to_tensor(batch_size))
        output = array_ops.reshape(output, final_shape, name="output")
        output.set_shape(TensorShape([None if static_batch is None else int(static_batch)])
                         .concatenate(gather_from.shape[1:1 + len(gather_shape)]))
        return output


def _mask_probs(probs, eos_token, finished):
    """Finished beams: log-prob 0 for eos, the dtype's minimum for everything else."""
    vocab_size = array_ops.shape(probs)[2]
    finished_row = gather_ops.one_hot(eos_token, vocab_size, dtype=probs.dtype, on_value=0.0,
                                      off_value=float(np.finfo(np.float32).min))
    finished_probs = joining_ops.tile(
        array_ops.reshape(finished_row, [1, 1, -1]),
        joining_ops.concat([array_ops.shape(finished), [1]], 0))
    finished_mask = joining_ops.tile(array_ops.expand_dims(finished, 2), [1, 1, vocab_size])
    return gather_ops.where(finished_mask, finished_probs, probs)


def _length_penalty(sequence_lengths, penalty_factor):
    if isinstance(penalty_factor, (int, float)) and penalty_factor == 0:
        return 1.0
    lengths = math_ops.cast(sequence_lengths, dtypes.float32)
    return ((5.0 + lengths) ** penalty_factor) / ((5.0 + 1.0) ** penalty_factor)


class BeamSearchDecoder(Decoder):
    """Raises:
      TypeError: `output_layer` is not a layer.
      ValueError: `start_tokens` not a vector, `end_token` not a scalar.
      NotImplementedError: coverage_penalty_weight != 0.
    """

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        assert_like_rnncell("cell", cell)
        if output_layer is not None and not hasattr(output_layer, "compute_output_shape"):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        if coverage_penalty_weight:
            raise NotImplementedError("BeamSearchDecoder: coverage_penalty_weight is not "
                                      "supported")
        self._cell, self._output_layer = cell, output_layer
        self._embedding_fn = embedding if callable(embedding) else \
            (lambda ids: embedding_ops.embedding_lookup(embedding, ids))
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._batch_size = array_ops.size(start_tokens)
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._initial_cell_state = map_structure(self._maybe_split_batch_beams, initial_state,
                                                 self._cell.state_size)
        self._start_tokens = joining_ops.tile(array_ops.expand_dims(self._start_tokens, 1),
                                              [1, beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = gather_ops.one_hot(
            creation_ops.zeros([self._batch_size], dtype=dtypes.int32), depth=beam_width,
            on_value=False, off_value=True, dtype=dtypes.bool_)

    batch_size = property(lambda self: self._batch_size)
    tracks_own_finished = property(lambda self: True)

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        with_batch = map_structure(lambda s: TensorShape([None]).concatenate(s), size)
        out = self._output_layer.compute_output_shape(with_batch)
        return map_structure(lambda s: TensorShape(s)[1:], out)

    @property
    def output_size(self):
        beam = TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=beam, predicted_ids=beam, parent_ids=beam)

    @property
    def output_dtype(self):
        dtype = flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=map_structure(lambda _: dtype,
                                                            self._rnn_output_size()),
                                       predicted_ids=dtypes.int32, parent_ids=dtypes.int32)

    # -- [batch * beam, ...] <-> [batch, beam, ...] ------------------------------------------
    def _static_batch(self):
        static = constant_value(convert_to_tensor(self._batch_size))
        return None if static is None else int(static)

    def _split_batch_beams(self, t, s):
        s = TensorShape(s)
        shape = array_ops.shape(t)
        out = array_ops.reshape(t, joining_ops.concat(
            [joining_ops.stack([self._batch_size, self._beam_width]), shape[1:]], 0))
        expected = TensorShape([self._static_batch(), self._beam_width]).concatenate(s)
        if not out.shape.is_compatible_with(expected):
            raise ValueError(f"Unexpected behavior when reshaping between beam width and "
                             f"batch size. The reshaped tensor has shape: {out.shape}. We "
                             f"expected it to have shape (batch_size, beam_width, depth) == "
                             f"{expected}. Perhaps you forgot to create a zero_state with "
                             f"batch_size=encoder_batch_size * beam_width?")
        out.set_shape(expected)
        return out

    def _merge_batch_beams(self, t, s):
        s = TensorShape(s)
        shape = array_ops.shape(t)
        out = array_ops.reshape(t, joining_ops.concat(
            [array_ops.reshape(self._batch_size * self._beam_width, [1]), shape[2:]], 0))
        static = self._static_batch()
        out.set_shape(TensorShape([None if static is None else static * self._beam_width])
                      .concatenate(s))
        return out

    def _maybe_split_batch_beams(self, t, s):
        if isinstance(t, TensorArray) or t.shape.ndims is None or t.shape.ndims < 1:
            return t
        return self._split_batch_beams(t, s)

    def _maybe_merge_batch_beams(self, t, s):
        if isinstance(t, TensorArray) or t.shape.ndims is None or t.shape.ndims < 2:
            return t
        return self._merge_batch_beams(t, s)

    # -- decoding ------------------------------------------------------------------------------
    def initialize(self, name=None):
        dtype = flatten(self._initial_cell_state)[0].dtype
        log_probs = gather_ops.one_hot(
            creation_ops.zeros([self._batch_size], dtype=dtypes.int32),
            depth=self._beam_width, on_value=0.0, off_value=-np.inf, dtype=dtype)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=creation_ops.zeros([self._batch_size, self._beam_width], dtypes.int64),
            accumulated_attention_probs=())
        return self._finished, self._start_inputs, state

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BeamSearchDecoderStep", (time, inputs, state)):
            inputs = map_structure(lambda i: self._merge_batch_beams(i, i.shape[2:]), inputs)
            cell_state = map_structure(self._maybe_merge_batch_beams, state.cell_state,
                                       self._cell.state_size)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = map_structure(lambda o: self._split_batch_beams(o, o.shape[1:]),
                                         cell_outputs)
            next_cell_state = map_structure(self._maybe_split_batch_beams, next_cell_state,
                                            self._cell.state_size)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = self._beam_search_step(cell_outputs, next_cell_state, state)
            finished = next_state.finished
            next_inputs = control_flow_ops.cond(
                reduction_ops.reduce_all(finished), lambda: self._start_inputs,
                lambda: self._embedding_fn(output.predicted_ids))
        return output, next_state, next_inputs, finished

    def _beam_search_step(self, logits, next_cell_state, beam_state):
        batch_size, beam = self._batch_size, self._beam_width
        prev_finished = beam_state.finished
        step_log_probs = _mask_probs(nn_ops.log_softmax(logits), self._end_token,
                                     prev_finished)
        total_probs = array_ops.expand_dims(beam_state.log_probs, 2) + step_log_probs
        vocab_size = logits.shape[-1]
        vocab_size = getattr(vocab_size, "value", vocab_size) or array_ops.shape(logits)[-1]
        lengths_to_add = gather_ops.one_hot(
            creation_ops.fill([batch_size, beam], self._end_token), depth=vocab_size,
            on_value=np.int64(0), off_value=np.int64(1), dtype=dtypes.int64)
        add_mask = math_ops.cast(math_ops.logical_not(prev_finished), dtypes.int64)
        new_lengths = lengths_to_add * array_ops.expand_dims(add_mask, 2) + \
            array_ops.expand_dims(beam_state.lengths, 2)
        scores = total_probs / _length_penalty(new_lengths, self._length_penalty_weight)
        scores_flat = array_ops.reshape(scores, joining_ops.stack([batch_size, -1]))
        next_scores, word_indices = nn_ops.top_k(scores_flat, k=beam)
        static = self._static_batch()
        next_scores.set_shape([static, beam])
        word_indices.set_shape([static, beam])
        next_probs = _gather_helper(word_indices, total_probs, batch_size, beam * vocab_size,
                                    [-1])
        next_word_ids = math_ops.cast(math_ops.mod(word_indices, vocab_size), dtypes.int32)
        next_beam_ids = math_ops.cast(math_ops.floordiv(word_indices, vocab_size),
                                      dtypes.int32)
        prev_finished = _gather_helper(next_beam_ids, prev_finished, batch_size, beam, [-1])
        next_finished = math_ops.logical_or(prev_finished,
                                            math_ops.equal(next_word_ids, self._end_token),
                                            name="next_beam_finished")
        next_len = _gather_helper(next_beam_ids, beam_state.lengths, batch_size, beam, [-1])
        next_len += math_ops.cast(math_ops.logical_not(prev_finished), dtypes.int64)
        next_cell_state = map_structure(
            lambda g: g if isinstance(g, TensorArray) or g.shape.ndims < 2 else
            _gather_helper(next_beam_ids, g, batch_size, beam, [batch_size * beam, -1]),
            next_cell_state)
        state = BeamSearchDecoderState(cell_state=next_cell_state, log_probs=next_probs,
                                       lengths=next_len, finished=next_finished,
                                       accumulated_attention_probs=())
        return BeamSearchDecoderOutput(next_scores, next_word_ids, next_beam_ids), state

    def finalize(self, outputs, final_state, sequence_lengths):
        del sequence_lengths
        max_lengths = math_ops.cast(reduction_ops.reduce_max(final_state.lengths, axis=1),
                                    dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids,
                                    max_sequence_lengths=max_lengths,
                                    end_token=self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=map_structure(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids,
                                                       final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(beam_search_decoder_output=outputs,
                                            predicted_ids=predicted_ids), final_state

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        """A TensorArray of [batch * beam, ...] steps → the stacked steps in beam order."""
        if not isinstance(t, TensorArray):
            return t
        shape = t.element_shape
        if shape.ndims is None or shape.ndims < 1:
            return t
        static = self._static_batch()
        first = shape.as_list()[0]
        if static is not None and first is not None and first != static * self._beam_width:
            return t
        return gather_tree_from_array(t.stack(), parent_ids, sequence_length)
