"""`tile_batch` and `gather_tree` for beam search (TF 1.15's beam_search_decoder.py and
beam_search_ops.py), built from core ops."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    creation_ops,
    gather_ops,
    joining_ops,
    math_ops,
    reduction_ops,
)
from tensorweave.ops.control_flow_util import map_structure
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.ops.while_loop import while_loop
from tensorweave.shapes import TensorShape


def _tile_batch(t, multiplier):
    t = convert_to_tensor(t, name="t")
    if t.shape.ndims is None or t.shape.ndims < 1:
        raise ValueError("t must have statically known rank")
    shape_t = array_ops.shape(t)
    tiling = [1] * (t.shape.ndims + 1)
    tiling[1] = multiplier
    tiled = joining_ops.tile(array_ops.expand_dims(t, 1), tiling)
    tiled = array_ops.reshape(tiled, joining_ops.concat(
        [array_ops.reshape(shape_t[0] * multiplier, [1]), shape_t[1:]], 0))
    batch = t.shape.as_list()[0]
    tiled.set_shape(TensorShape([None if batch is None else batch * multiplier])
                    .concatenate(t.shape[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    """Repeats each batch entry `multiplier` times in place: [a, b] → [a, a, b, b] (every
    tensor of a nested structure).

    Raises:
      ValueError: a tensor of unknown or zero rank.
    """
    with name_scope(name, "tile_batch", [t, multiplier]):
        return map_structure(lambda t_: _tile_batch(t_, multiplier), t)


def _batch_gather(x, idx, width):
    """x[b, idx[b, k]] for [B, K] `x` and `idx`."""
    batch = array_ops.shape(idx)[0]
    offsets = array_ops.expand_dims(creation_ops.range(batch) * width, 1)
    flat = gather_ops.gather(array_ops.reshape(x, [-1]), array_ops.reshape(idx + offsets, [-1]))
    return array_ops.reshape(flat, array_ops.shape(idx))


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The full beams from per-step ids and parent beam indices ([max_time, batch, beam]):
    backtracks from each beam's last step (`max_sequence_lengths[b]`), then sets every
    step after the first `end_token` (and past the length) to `end_token`."""
    with name_scope(name, "GatherTree", [step_ids, parent_ids, max_sequence_lengths]):
        step_ids = convert_to_tensor(step_ids, dtype=dtypes.int32)
        parent_ids = convert_to_tensor(parent_ids, dtype=dtypes.int32)
        lengths = convert_to_tensor(max_sequence_lengths, dtype=dtypes.int32)
        end_token = convert_to_tensor(end_token, dtype=dtypes.int32)
        shape = array_ops.shape(step_ids)
        max_time, beam = shape[0], shape[2]
        identity = creation_ops.zeros_like(step_ids[0]) + creation_ops.range(beam)
        ids_ta = TensorArray(dtypes.int32, size=max_time).unstack(step_ids)
        parents_ta = TensorArray(dtypes.int32, size=max_time).unstack(parent_ids)
        out_ta = TensorArray(dtypes.int32, size=max_time, element_shape=step_ids.shape[1:])
        ends = creation_ops.zeros_like(identity) + end_token

        def body(t, parent, out):
            valid = math_ops.less(creation_ops.zeros_like(identity) + t,
                                  array_ops.expand_dims(lengths, 1))
            value = _batch_gather(ids_ta.read(t), parent, beam)
            next_parent = _batch_gather(parents_ta.read(t), parent, beam)
            out = out.write(t, gather_ops.where(valid, value, ends))
            return t - 1, gather_ops.where(valid, next_parent, parent), out

        _, _, out_ta = while_loop(lambda t, *_: t >= 0, body,
                                  (max_time - 1, identity, out_ta))
        beams = out_ta.stack()
        is_end = math_ops.cast(math_ops.equal(beams, end_token), dtypes.int32)
        ended = reduction_ops.cumsum(is_end, axis=0, exclusive=True) > 0
        beams = gather_ops.where(ended, creation_ops.zeros_like(beams) + end_token, beams)
        beams.set_shape(step_ids.shape)
        return beams


def gather_tree_from_array(t, parent_ids, sequence_length):
    """Reorders a stacked per-step tensor `t` ([max_time, batch * beam, ...]) along the
    beams `gather_tree` follows back from each final beam; steps past a beam's length keep
    their own beam."""
    shape = array_ops.shape(parent_ids)
    max_time, batch_size, beam_width = shape[0], shape[1], shape[2]
    beam_ids = joining_ops.tile(
        array_ops.reshape(creation_ops.range(beam_width), [1, 1, -1]),
        joining_ops.stack([max_time, batch_size, 1]))
    lengths = math_ops.cast(sequence_length, dtypes.int32)
    sorted_ids = gather_tree(beam_ids, parent_ids,
                             max_sequence_lengths=reduction_ops.reduce_max(lengths, axis=1),
                             end_token=beam_width + 1)
    in_bound = joining_ops.transpose(creation_ops.sequence_mask(lengths, maxlen=max_time),
                                     [2, 0, 1])
    sorted_ids = gather_ops.where(in_bound, sorted_ids, beam_ids)
    time_ind = joining_ops.tile(array_ops.reshape(creation_ops.range(max_time), [-1, 1, 1]),
                                joining_ops.stack([1, batch_size, beam_width]))
    batch_ind = joining_ops.tile(array_ops.reshape(creation_ops.range(batch_size), [1, -1, 1]),
                                 joining_ops.stack([max_time, 1, beam_width]))
    indices = joining_ops.stack([time_ind, batch_ind, sorted_ids], -1)
    final_shape = array_ops.shape(t)
    gather_from = array_ops.reshape(
        t, joining_ops.stack([max_time, batch_size, beam_width, -1]))
    return array_ops.reshape(gather_ops.gather_nd(gather_from, indices), final_shape)
