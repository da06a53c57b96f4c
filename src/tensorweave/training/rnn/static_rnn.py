"""TF1's unrolled RNN drivers (rnn.py): `static_rnn` and `static_bidirectional_rnn` run the
cell once per element of a Python list of `[batch, depth]` inputs, reusing its variables
after the first step; `sequence_length` masks with `rnn_step` (conds skip finished work).
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    creation_ops,
    joining_ops,
    math_ops,
    reduction_ops,
    sequence_ops,
    slicing_ops,
)
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.control_flow_util import flatten, is_sequence, pack_sequence_as
from tensorweave.shapes import TensorShape
from tensorweave.training.rnn.cell_base import assert_like_rnncell, concat_shape
from tensorweave.training.rnn.rnn import (
    infer_state_dtype,
    initial_state_for,
    rnn_step,
    should_cache,
)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """The cell unrolled over a Python list of `[batch, depth]` inputs (TF1's
    `tf.nn.static_rnn`); variables are reused after the first step.

    Returns:
      `(outputs, state)`: a list of outputs, one per input, and the final state.
    Raises:
      TypeError: `cell` is not an RNNCell, or `inputs` is not a sequence.
      ValueError: empty inputs, an unknown input depth, no `dtype` without
        `initial_state`, or a non-vector `sequence_length`.
    """
    assert_like_rnncell("cell", cell)
    if not is_sequence(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        if should_cache() and varscope.caching_device is None:
            varscope.set_caching_device(lambda op: op.device)
        fixed_batch_size, first_input = _static_batch_size(inputs)
        batch_size = fixed_batch_size if fixed_batch_size is not None \
            else array_ops.shape(first_input)[0]
        state = initial_state_for(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            masking = _static_masking(cell, sequence_length, batch_size, fixed_batch_size,
                                      dtype, state)
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(input_=input_, state=state):
                return cell(input_, state)

            if sequence_length is not None:
                output, state = rnn_step(time=time, state=state, call_cell=call_cell,
                                          state_size=cell.state_size, **masking)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def _static_batch_size(inputs):
    """(the static batch size or None, the first input tensor).

    Raises:
      ValueError: an input depth not known statically, or batch sizes that disagree.
    """
    first_input = inputs
    while is_sequence(first_input):
        first_input = first_input[0]
    first_input = convert_to_tensor(first_input)
    if first_input.shape.ndims == 1:
        return first_input.shape.as_tuple()[0], first_input
    fixed = first_input.shape.with_rank_at_least(2)[0]
    for flat_input in flatten(inputs):
        shape = convert_to_tensor(flat_input).shape.with_rank_at_least(2)
        fixed.assert_is_compatible_with(shape[0])
        for i, size in enumerate(shape[1:].as_list() if shape.ndims else []):
            if size is None:
                raise ValueError(f"Input size (dimension {i} of input {flat_input}) must be "
                                 "accessible via shape inference, but saw value None.")
    return fixed.value, first_input


def _static_masking(cell, sequence_length, batch_size, fixed_batch_size, dtype, state):
    """The `rnn_step` arguments for sequence-length masking in `static_rnn`."""
    sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"Argument `sequence_length` must be a vector of length "
                         f"{batch_size}. Received sequence_length={sequence_length}.")

    def zero_output_for(size):
        out = creation_ops.zeros(joining_ops.stack(concat_shape(batch_size, size)),
                                 infer_state_dtype(dtype, state))
        out.set_shape(TensorShape(concat_shape(fixed_batch_size, size, static=True)))
        return out

    zero_output = pack_sequence_as(cell.output_size,
                                   tuple(zero_output_for(s) for s in flatten(cell.output_size)))
    sequence_length = math_ops.cast(sequence_length, dtypes.int32)
    return dict(sequence_length=sequence_length, zero_output=zero_output,
                min_sequence_length=reduction_ops.reduce_min(sequence_length),
                max_sequence_length=reduction_ops.reduce_max(sequence_length))


def _reverse_seq(input_seq, lengths):
    """A Python list of time steps reversed: whole (no `lengths`) or per sequence length."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_input_seq = tuple(flatten(x) for x in input_seq)
    flat_results = [[] for _ in input_seq]
    for sequence in zip(*flat_input_seq):
        rank = sequence[0].shape.ndims
        input_shape = TensorShape(None if rank is None else [None] * rank)
        for x in sequence:
            input_shape.assert_is_compatible_with(x.shape)
            x.set_shape(input_shape)
        reversed_ = sequence_ops.reverse_sequence(joining_ops.stack(sequence), lengths, 0, 1)
        for r, flat_result in zip(slicing_ops.unstack(reversed_), flat_results):
            r.set_shape(input_shape)
            flat_result.append(r)
    return [pack_sequence_as(x, flat) for x, flat in zip(input_seq, flat_results)]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """Forward and backward `static_rnn`s; each output is `concat([fw, bw], 1)`.

    Returns:
      `(outputs, output_state_fw, output_state_bw)`.
    Raises:
      TypeError, ValueError: as `static_rnn`.
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not is_sequence(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                       sequence_length, scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    flat_outputs = tuple(joining_ops.concat([fw, bw], 1)
                         for fw, bw in zip(flatten(output_fw), flatten(output_bw)))
    return pack_sequence_as(output_fw, flat_outputs), state_fw, state_bw


__all__ = ["static_rnn", "static_bidirectional_rnn"]
