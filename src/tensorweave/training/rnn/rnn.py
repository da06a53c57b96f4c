"""TF1's while-loop RNN drivers (rnn.py): `dynamic_rnn` and `bidirectional_dynamic_rnn`, built
as TF1 builds them (the unrolled ones are in static_rnn.py).

`dynamic_rnn` runs the cell in a `tf.while_loop` over time: inputs are unstacked into a
TensorArray (time-major), each step reads one, writes the output into another TensorArray,
which is stacked at the end. With `sequence_length`, steps past a sequence's length copy the
state through and emit zeros (`Select` on `time >= sequence_length`), and the loop stops at
`max(sequence_length)`. Variables live under the driver's scope: `rnn/basic_lstm_cell/kernel`,
`bidirectional_rnn/fw/...`, ops under `rnn/while/...`; gradients flow through the loop.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import colocate_with, control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    control_flow_ops,
    creation_ops,
    gather_ops,
    joining_ops,
    math_ops,
    reduction_ops,
    sequence_ops,
)
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.constant_op import constant
from tensorweave.ops.control_flow_util import (
    assert_same_structure,
    flatten,
    is_sequence,
    map_structure,
    pack_sequence_as,
)
from tensorweave.ops.shape_inference import constant_value
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.ops.while_loop import while_loop
from tensorweave.shapes import TensorShape, as_shape
from tensorweave.training.rnn.cell_base import assert_like_rnncell, concat_shape


# -- helpers ----------------------------------------------------------------------------------
def _transpose_batch_time(x):
    """Swaps the first two dims of `x` (rank < 2 is returned as is), keeping static dims."""
    static = x.shape
    if static.ndims is not None and static.ndims < 2:
        return x
    rank = array_ops.rank(x)
    x_t = joining_ops.transpose(x, joining_ops.concat(
        ([1, 0], creation_ops.range(2, rank)), axis=0))
    dims = static.as_tuple()
    if dims is not None:
        x_t.set_shape(TensorShape([dims[1], dims[0]]).concatenate(static[2:]))
    return x_t


def _best_effort_input_batch_size(flat_input):
    """The static batch size (dim 1 of time-major inputs), else `tf.shape(x)[1]`.

    Raises:
      ValueError: an input of rank < 2.
    """
    for input_ in flat_input:
        shape = input_.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError(f"Input tensor should have rank >= 2. Received input={input_} of "
                             f"rank {shape.ndims}")
        batch_size = shape.as_tuple()[1]
        if batch_size is not None:
            return batch_size
    return array_ops.shape(flat_input[0])[1]


def infer_state_dtype(explicit_dtype, state):
    """`explicit_dtype`, else the (single) dtype of the state's tensors.

    Raises:
      ValueError: the state holds tensors of different dtypes, or no tensors.
    """
    if explicit_dtype is not None:
        return explicit_dtype
    if is_sequence(state):
        inferred = [element.dtype for element in flatten(state)]
        if not inferred:
            raise ValueError(f"Unable to infer dtype from argument state={state}.")
        if any(d != inferred[0] for d in inferred):
            raise ValueError(f"Argument state={state} has tensors of different inferred "
                             f"dtypes. Unable to infer a single representative dtype. Dtypes "
                             f"received: {inferred}")
        return inferred[0]
    return state.dtype


def _maybe_tensor_shape_from_tensor(shape):
    if isinstance(shape, Tensor):
        return as_shape(constant_value(shape))
    return shape


def should_cache() -> bool:
    """Variables get a caching device unless built inside a while loop (TF1's rule)."""
    ctxt = get_default_graph().control_flow_context
    return ctxt is None or ctxt.get_while_context() is None


def _rank_error(fn: str, x, rank: int) -> ValueError:
    return ValueError(f"{fn}: inputs must have rank at least {rank} ([batch, time, depth], "
                      f"or [time, batch, depth] with time_major=True); got {x}. Shape {x.shape} "
                      f"must have rank at least {rank}")


# -- one step with sequence-length masking ----------------------------------------------------
def rnn_step(time, sequence_length, min_sequence_length, max_sequence_length, zero_output,
              state, call_cell, state_size, skip_conditionals=False):
    """One cell step for batches of mixed lengths: past `sequence_length[b]` the output is
    `zero_output` and the state is copied through (TF1's `_rnn_step`). Without
    `skip_conditionals`, conds skip the Selects when every sequence is running, or the cell
    when none is. Returns `(output, new_state)`.

    Raises:
      ValueError: the cell returned a structure unlike `zero_output`/`state`.
    """
    flat_state, flat_zero_output = flatten(state), flatten(zero_output)
    copy_cond = time >= sequence_length

    def copy_one_through(output, new_output):
        if isinstance(output, TensorArray) or output.shape.ndims == 0:
            return new_output
        with colocate_with(new_output):
            return gather_ops.where(copy_cond, output, new_output)

    def copy_some_through(flat_new_output, flat_new_state):
        return ([copy_one_through(z, n) for z, n in zip(flat_zero_output, flat_new_output)] +
                [copy_one_through(s, n) for s, n in zip(flat_state, flat_new_state)])

    def called():
        new_output, new_state = call_cell()
        assert_same_structure(zero_output, new_output)
        assert_same_structure(state, new_state)
        return flatten(new_output), flatten(new_state)

    if skip_conditionals:
        final = copy_some_through(*called())
    else:
        def maybe_copy_some_through():
            new_output, new_state = called()
            return control_flow_ops.cond(time < min_sequence_length,
                                         lambda: new_output + new_state,
                                         lambda: copy_some_through(new_output, new_state))

        final = control_flow_ops.cond(time >= max_sequence_length,
                                      lambda: flat_zero_output + flat_state,
                                      maybe_copy_some_through)
    return _restore_shapes(final, flat_zero_output, flat_state, zero_output, state)


def _restore_shapes(final, flat_zero_output, flat_state, zero_output, state):
    n = len(flat_zero_output)
    if len(final) != n + len(flat_state):
        raise ValueError("Internal error: state and output were not concatenated correctly.")
    outputs, states = final[:n], final[n:]
    for out, zero in zip(outputs, flat_zero_output):
        out.set_shape(zero.shape)
    for sub, old in zip(states, flat_state):
        if not isinstance(sub, TensorArray):
            sub.set_shape(old.shape)
    return pack_sequence_as(zero_output, outputs), pack_sequence_as(state, states)


# -- dynamic_rnn ------------------------------------------------------------------------------
def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time dim of `inputs` in a while loop (TF1's `tf.nn.dynamic_rnn`).

    Args:
      cell: an RNNCell.
      inputs: `[batch, time, depth]` (or `[time, batch, depth]` with `time_major`), or a
        nested structure of such tensors.
      sequence_length: optional int vector `[batch]`: past it, outputs are zero and the state
        is copied through.
      initial_state: the starting state (default: `cell.zero_state`, needing `dtype`).
      dtype: the state's dtype when `initial_state` is not given.
      parallel_iterations, swap_memory: passed to `tf.while_loop` (default 32 iterations).
      time_major: the layout of inputs and outputs.
      scope: the variable scope (default "rnn").
    Returns:
      `(outputs, final_state)`; outputs like `cell.output_size` with the inputs' layout.
    Raises:
      TypeError: `cell` is not an RNNCell.
      ValueError: inputs of rank < 3 or with unknown depth, mismatched time/batch sizes,
        no `dtype` without `initial_state`, a `sequence_length` that is not a vector.
    """
    assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn") as varscope:
        if should_cache() and varscope.caching_device is None:
            varscope.set_caching_device(lambda op: op.device)
        flat_input = [convert_to_tensor(x) for x in flatten(inputs)]
        for x in flat_input:
            if x.shape.ndims is not None and x.shape.ndims < 3:
                raise _rank_error("dynamic_rnn", x, 3)
        if not time_major:
            flat_input = tuple(_transpose_batch_time(x) for x in flat_input)
        sequence_length = _checked_sequence_length(sequence_length)
        batch_size = _best_effort_input_batch_size(flat_input)
        state = initial_state_for(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            with control_dependencies([_assert_has_shape(sequence_length, [batch_size])]):
                sequence_length = array_ops.identity(sequence_length, name="CheckSeqLen")
        inputs = pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(
            cell, inputs, state, parallel_iterations=parallel_iterations or 32,
            swap_memory=swap_memory, sequence_length=sequence_length, dtype=dtype)
        if not time_major:
            outputs = map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _checked_sequence_length(sequence_length):
    if sequence_length is None:
        return None
    sequence_length = math_ops.cast(sequence_length, dtypes.int32)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"Argument sequence_length must be a vector of length batch_size. "
                         f"Received sequence_length={sequence_length} of shape: "
                         f"{sequence_length.shape}")
    return array_ops.identity(sequence_length, name="sequence_length")


def initial_state_for(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If no initial_state is provided, argument `dtype` must be specified")
    if getattr(cell, "get_initial_state", None) is not None:
        return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
    return cell.zero_state(batch_size, dtype)


def _assert_has_shape(x, shape):
    x_shape = array_ops.shape(x)
    packed = joining_ops.stack(shape)
    return control_flow_ops.Assert(
        reduction_ops.reduce_all(math_ops.equal(x_shape, packed)),
        [f"Expected shape for Tensor {x.name} is ", packed, " but saw shape: ", x_shape])


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, swap_memory,
                      sequence_length=None, dtype=None):
    """The while loop of `dynamic_rnn` on time-major inputs: `(outputs, final_state)`.

    Raises:
      ValueError: unknown input depth, or time steps / batch sizes differing across inputs.
    """
    state = initial_state
    flat_input = flatten(inputs)
    flat_output_size = flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    got_shapes = tuple(x.shape.with_rank_at_least(3) for x in flat_input)
    const_time_steps, const_batch_size = _check_input_shapes(flat_input, got_shapes)
    dtype_out = infer_state_dtype(dtype, state)
    zero_output = _zero_output(cell, batch_size, dtype_out)
    if sequence_length is not None:
        min_sequence_length = reduction_ops.reduce_min(sequence_length)
        max_sequence_length = reduction_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = constant(0, dtype=dtypes.int32, name="time")
    output_ta, input_ta = _loop_arrays(flat_input, flat_output_size, time_steps,
                                       const_batch_size, dtype_out)

    def time_step(time, output_ta_t, state):
        input_t = tuple(ta.read(time) for ta in input_ta)
        for x, shape in zip(input_t, got_shapes):
            x.set_shape(shape[1:])
        input_t = pack_sequence_as(inputs, input_t)

        def call_cell():
            return cell(input_t, state)

        if sequence_length is not None:
            output, new_state = rnn_step(
                time=time, sequence_length=sequence_length,
                min_sequence_length=min_sequence_length,
                max_sequence_length=max_sequence_length, zero_output=zero_output,
                state=state, call_cell=call_cell, state_size=cell.state_size,
                skip_conditionals=True)
        else:
            output, new_state = call_cell()
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, flatten(output)))
        return time + 1, output_ta_t, new_state

    # NOTE: at least one step runs, so that the TensorArrays pick up the dynamic shape.
    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, output_final_ta, final_state = while_loop(
        cond=lambda time, *_: time < loop_bound, body=time_step,
        loop_vars=(time, output_ta, state), parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps, swap_memory=swap_memory)
    final_outputs = tuple(ta.stack() for ta in output_final_ta)
    for output, size in zip(final_outputs, flat_output_size):
        output.set_shape(concat_shape([const_time_steps, const_batch_size], size, static=True))
    return pack_sequence_as(cell.output_size, final_outputs), final_state


def _zero_output(cell, batch_size, dtype):
    """Zeros shaped like one step's output (what finished sequences emit)."""
    flat = tuple(creation_ops.zeros(joining_ops.stack(concat_shape(batch_size, size)), dtype)
                 for size in flatten(cell.output_size))
    return pack_sequence_as(cell.output_size, flat)


def _loop_arrays(flat_input, flat_output_size, time_steps, const_batch_size, dtype):
    """(output TensorArrays, input TensorArrays holding the unstacked time-major inputs),
    named `<scope>/dynamic_rnn/output_<i>` and `.../input_<i>` as in TF."""
    with name_scope("dynamic_rnn") as base_name:
        pass

    def create_ta(name, element_shape, ta_dtype):
        return TensorArray(dtype=ta_dtype, size=time_steps, element_shape=element_shape,
                           tensor_array_name=base_name + name)

    output_ta = tuple(
        create_ta(f"output_{i}", TensorShape([const_batch_size]).concatenate(
            _maybe_tensor_shape_from_tensor(size)), dtype)
        for i, size in enumerate(flat_output_size))
    input_ta = tuple(create_ta(f"input_{i}", x.shape[1:], x.dtype)
                     for i, x in enumerate(flat_input))
    return output_ta, tuple(ta.unstack(x) for ta, x in zip(input_ta, flat_input))


def _check_input_shapes(flat_input, got_shapes):
    """(static time steps, static batch size), the same for every input.

    Raises:
      ValueError: an unknown depth, or time/batch sizes that differ between inputs.
    """
    const_time_steps, const_batch_size = got_shapes[0].as_list()[:2]
    for x, shape in zip(flat_input, got_shapes):
        if not shape[2:].is_fully_defined():
            raise ValueError(f"Input size (depth of inputs) must be accessible via shape "
                             f"inference, but saw value None for input={x}.")
        got_time, got_batch = shape.as_list()[:2]
        if const_time_steps != got_time:
            raise ValueError(f"Time steps is not the same for all the elements in the input "
                             f"in a batch. Received time steps={got_time} for input={x}.")
        if const_batch_size != got_batch:
            raise ValueError(f"Batch_size is not the same for all the elements in the input. "
                             f"Received batch size={got_batch} for input={x}.")
    return const_time_steps, const_batch_size


# -- bidirectional ----------------------------------------------------------------------------
def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward and a backward `dynamic_rnn` (variables under `bidirectional_rnn/fw` and
    `bidirectional_rnn/bw`); the backward one reads the inputs reversed (per sequence length
    when given) and its outputs are reversed back.

    Returns:
      `((output_fw, output_bw), (output_state_fw, output_state_bw))`.
    Raises:
      TypeError: a cell is not an RNNCell. ValueError: as `dynamic_rnn`.
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(x):
        if sequence_length is not None:
            return sequence_ops.reverse_sequence(x, seq_lengths=sequence_length,
                                                 seq_axis=time_axis, batch_axis=batch_axis)
        return joining_ops.reverse(x, axis=[time_axis])

    common = dict(sequence_length=sequence_length, dtype=dtype,
                  parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                  time_major=time_major)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, initial_state=initial_state_fw,
                                              scope=fw_scope, **common)
        with vs.variable_scope("bw") as bw_scope:
            inputs_reverse = map_structure(reverse, inputs)
            tmp, state_bw = dynamic_rnn(cell_bw, inputs_reverse,
                                        initial_state=initial_state_bw, scope=bw_scope,
                                        **common)
    output_bw = reverse(tmp)
    return (output_fw, output_bw), (state_fw, state_bw)


__all__ = ["dynamic_rnn", "bidirectional_dynamic_rnn"]
