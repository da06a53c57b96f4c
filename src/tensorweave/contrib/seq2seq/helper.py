"""`tf.contrib.seq2seq` helpers (TF 1.15's helper.py): what a `BasicDecoder` feeds the cell
at each step and when a sequence is finished. `TrainingHelper` reads the ground-truth inputs
(teacher forcing) until `sequence_length`; `GreedyEmbeddingHelper` feeds back the embedding
of the argmax and finishes at `end_token`; `SampleEmbeddingHelper` samples instead."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    control_flow_ops,
    creation_ops,
    embedding_ops,
    joining_ops,
    math_ops,
    reduction_ops,
)
from tensorweave.ops.control_flow_util import map_structure
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.shapes import TensorShape


def transpose_batch_time(x):
    """[batch, time, ...] ↔ [time, batch, ...] (rank >= 2)."""
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    if rank is not None and rank < 2:
        return x
    perm = [1, 0] + list(range(2, rank))
    out = joining_ops.transpose(x, perm)
    if x.shape.dims is not None:
        dims = x.shape.as_list()
        out.set_shape([dims[1], dims[0]] + dims[2:])
    return out


def _unstack_ta(inp):
    return TensorArray(dtype=inp.dtype, size=array_ops.shape(inp)[0],
                       element_shape=inp.shape[1:]).unstack(inp)


class Helper:
    """The interface: `batch_size`, `sample_ids_shape`, `sample_ids_dtype`,
    `initialize() -> (finished, inputs)`, `sample(time, outputs, state) -> ids`,
    `next_inputs(time, outputs, state, sample_ids) -> (finished, inputs, state)`."""

    batch_size = property(lambda self: self._batch_size)
    sample_ids_shape = property(lambda self: TensorShape([]))
    sample_ids_dtype = property(lambda self: dtypes.int32)


class TrainingHelper(Helper):
    """Feeds `inputs[:, t]` ([batch, time, ...], or time-major) at step t.

    Raises:
      ValueError: `sequence_length` is not a vector.
    """

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with name_scope(name, "TrainingHelper", [inputs, sequence_length]):
            inputs = map_structure(convert_to_tensor, inputs)
            if not time_major:
                inputs = map_structure(transpose_batch_time, inputs)
            self._input_tas = map_structure(_unstack_ta, inputs)
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError(f"Expected sequence_length to be a vector, but received "
                                 f"shape: {self._sequence_length.shape}")
            self._zero_inputs = map_structure(lambda inp: creation_ops.zeros_like(inp[0, :]),
                                              inputs)
            self._batch_size = array_ops.size(self._sequence_length)

    inputs = property(lambda self: self._input_tas)
    sequence_length = property(lambda self: self._sequence_length)

    def _read(self, time, finished):
        all_finished = reduction_ops.reduce_all(finished)
        return control_flow_ops.cond(
            all_finished, lambda: self._zero_inputs,
            lambda: map_structure(lambda ta: ta.read(time), self._input_tas))

    def initialize(self, name=None):
        with name_scope(name, "TrainingHelperInitialize"):
            finished = math_ops.equal(0, self._sequence_length)
            return finished, self._read(0, finished)

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperSample", [time, outputs]):
            return math_ops.cast(reduction_ops.argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperNextInputs", [time, outputs, state]):
            next_time = time + 1
            finished = math_ops.greater_equal(next_time, self._sequence_length)
            return finished, self._read(next_time, finished), state


class GreedyEmbeddingHelper(Helper):
    """Starts from `embedding(start_tokens)`, then feeds `embedding(argmax(outputs))`; a
    sequence finishes when it emits `end_token`. `embedding`: a [vocab, depth] params
    tensor or a callable on ids.

    Raises:
      ValueError: `start_tokens` is not a vector or `end_token` not a scalar.
    """

    def __init__(self, embedding, start_tokens, end_token):
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            self._embedding_fn = lambda ids: embedding_ops.embedding_lookup(embedding, ids)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._batch_size = array_ops.size(start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def initialize(self, name=None):
        finished = joining_ops.tile([False], [self._batch_size])
        return finished, self._start_inputs

    def _ids(self, outputs):
        return reduction_ops.argmax(outputs, axis=-1, output_type=dtypes.int32)

    def sample(self, time, outputs, state, name=None):
        del time, state
        if not hasattr(outputs, "dtype") or not hasattr(outputs, "op"):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        return self._ids(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        del time, outputs
        finished = math_ops.equal(sample_ids, self._end_token)
        all_finished = reduction_ops.reduce_all(finished)
        next_inputs = control_flow_ops.cond(all_finished, lambda: self._start_inputs,
                                            lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """`GreedyEmbeddingHelper` that samples the next id from softmax(outputs /
    softmax_temperature)."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None,
                 seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def _ids(self, outputs):
        from tensorweave.ops import random_ops

        logits = outputs if self._softmax_temperature is None \
            else outputs / self._softmax_temperature
        ids = random_ops.multinomial(logits, 1, seed=self._seed, output_dtype=dtypes.int32)
        return array_ops.reshape(ids, [-1])
