"""`tf.contrib.seq2seq.Decoder` and `dynamic_decode` (TF 1.15's decoder.py): a decoder's
`step` runs inside a `tf.while_loop` until every sequence is finished (or
`maximum_iterations`); outputs collect in TensorArrays and come back batch-major."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.contrib.seq2seq.helper import transpose_batch_time
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    creation_ops,
    gather_ops,
    joining_ops,
    math_ops,
    reduction_ops,
)
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.control_flow_util import map_structure
from tensorweave.ops.shape_inference import constant_value
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.ops.while_loop import while_loop
from tensorweave.shapes import TensorShape


class Decoder:
    """The interface: `batch_size`, `output_size`, `output_dtype`, `initialize() ->
    (finished, inputs, state)`, `step(time, inputs, state) -> (outputs, state, inputs,
    finished)`, optional `finalize(outputs, state, lengths)`, `tracks_own_finished`."""

    @property
    def tracks_own_finished(self) -> bool:
        return False

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError


def _zeros(shape, dtype, batch_size):
    """Zeros [batch_size, *shape]."""
    dims = convert_to_tensor(TensorShape(shape).as_list(), dtype=dtypes.int32)
    full = joining_ops.concat([array_ops.reshape(batch_size, [1]), dims], 0)
    return creation_ops.zeros(full, dtype=dtype)


def _create_zero_outputs(size, dtype, batch_size):
    return map_structure(lambda s, d: _zeros(s, d, batch_size), size, dtype)


def _element_shape(batch_size, from_shape):
    if not isinstance(from_shape, TensorShape) or from_shape.ndims == 0:
        return TensorShape(None)
    static = constant_value(convert_to_tensor(batch_size))
    return TensorShape([None if static is None else int(static)]).concatenate(from_shape)


def _where_finished(finished, cur, new):
    if isinstance(cur, TensorArray):
        return new
    new.set_shape(cur.shape)
    if new.shape.ndims == 0:
        return new
    return gather_ops.where(finished, cur, new)


def _check_max_iterations(maximum_iterations):
    if maximum_iterations is None:
        return None
    maximum_iterations = convert_to_tensor(maximum_iterations, dtype=dtypes.int32,
                                           name="maximum_iterations")
    if maximum_iterations.shape.ndims != 0:
        raise ValueError("maximum_iterations must be a scalar")
    return maximum_iterations


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """Runs `decoder` to the end under the variable scope `decoder`; returns
    `(final_outputs, final_state, final_sequence_lengths)`.

    Raises:
      TypeError: `decoder` is not a Decoder.
      ValueError: `maximum_iterations` is not a scalar.
    """
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with vs.variable_scope(scope, "decoder"):
        maximum_iterations = _check_max_iterations(maximum_iterations)
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = _create_zero_outputs(decoder.output_size, decoder.output_dtype,
                                            decoder.batch_size)
        if maximum_iterations is not None:
            initial_finished = math_ops.logical_or(initial_finished, 0 >= maximum_iterations)
        initial_lengths = creation_ops.zeros_like(initial_finished, dtype=dtypes.int32)
        outputs_ta = map_structure(
            lambda s, d: TensorArray(dtype=d, size=0, dynamic_size=True,
                                     element_shape=_element_shape(decoder.batch_size, s)),
            decoder.output_size, decoder.output_dtype)

        def condition(time, outputs_ta, state, inputs, finished, lengths):
            return math_ops.logical_not(reduction_ops.reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, lengths):
            outputs, dec_state, next_inputs, dec_finished = decoder.step(time, inputs, state)
            next_finished = dec_finished if decoder.tracks_own_finished \
                else math_ops.logical_or(dec_finished, finished)
            next_lengths = gather_ops.where(
                math_ops.logical_not(finished),
                creation_ops.fill(array_ops.shape(lengths), time + 1), lengths)
            emit = map_structure(lambda out, zero: gather_ops.where(finished, zero, out),
                                 outputs, zero_outputs) if impute_finished else outputs
            if impute_finished:
                dec_state = map_structure(lambda new, cur: _where_finished(finished, cur, new),
                                          dec_state, state)
            outputs_ta = map_structure(lambda ta, out: ta.write(time, out), outputs_ta, emit)
            return time + 1, outputs_ta, dec_state, next_inputs, next_finished, next_lengths

        res = while_loop(condition, body,
                         loop_vars=(convert_to_tensor(0, dtype=dtypes.int32), outputs_ta,
                                    initial_state, initial_inputs, initial_finished,
                                    initial_lengths),
                         parallel_iterations=parallel_iterations,
                         maximum_iterations=maximum_iterations, swap_memory=swap_memory)
        final_state, final_lengths = res[2], res[5]
        final_outputs = map_structure(lambda ta: ta.stack(), res[1])
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = map_structure(transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_lengths
