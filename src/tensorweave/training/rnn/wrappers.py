"""Cells built from other cells (TF1's rnn_cell_impl / rnn_cell_wrapper_impl): MultiRNNCell
(stacked, variables under `multi_rnn_cell/cell_<i>/`), DropoutWrapper, ResidualWrapper and
DeviceWrapper. A wrapper calls the wrapped cell directly, so it adds no variable scope: a
wrapped BasicLSTMCell keeps `rnn/basic_lstm_cell/kernel`.
"""

from __future__ import annotations

import hashlib
import numbers

from tensorweave.framework.scopes import device, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import joining_ops, math_ops, random_ops
from tensorweave.ops import slicing_ops as slicing
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.control_flow_util import (
    assert_same_structure,
    is_sequence,
    map_structure,
    pack_sequence_as,
)
from tensorweave.ops.shape_inference import constant_value
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.shapes import TensorShape
from tensorweave.training.layers.base import Layer
from tensorweave.training.rnn.cell_base import RNNCell, assert_like_rnncell
from tensorweave.training.rnn.cells import LSTMStateTuple


class MultiRNNCell(RNNCell):
    """Cells applied in sequence; cell i runs in variable scope `cell_<i>`.

    Raises (constructor):
      ValueError: no cells, or a tuple state with `state_is_tuple=False`.
      TypeError: `cells` is not a list or tuple.
    """

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = cells
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(is_sequence(c.state_size) for c in cells):
            raise ValueError(f"Some cells return tuples of states, but the flag "
                             f"state_is_tuple is not set. State sizes are: "
                             f"{[c.state_size for c in cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return [w for c in self._cells if isinstance(c, Layer) for w in c.trainable_weights]

    @property
    def non_trainable_weights(self) -> list:
        weights = [w for c in self._cells if isinstance(c, Layer)
                   for w in c.non_trainable_weights]
        if not self.trainable:
            return [w for c in self._cells if isinstance(c, Layer)
                    for w in c.trainable_weights] + weights
        return weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    def call(self, inputs, state):
        """Runs each cell on the previous one's output.

        Raises:
          ValueError: `state_is_tuple` but `state` is not a tuple.
        """
        position, cur_inp, new_states = 0, inputs, []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length "
                                         f"{len(self.state_size)}, but received: {state}")
                    cur_state = state[i]
                else:
                    cur_state = slicing.slice(state, [0, position], [-1, cell.state_size])
                    position += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return cur_inp, tuple(new_states)
        return cur_inp, joining_ops.concat(new_states, 1)


class _RNNCellWrapper(RNNCell):
    """A cell around `cell`: same state and output sizes; `__call__` calls the wrapped
    cell's `__call__` (no scope of its own)."""

    def __init__(self, cell, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    @property
    def wrapped_cell(self):
        return self.cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    def build(self, inputs_shape):
        self.cell.build(inputs_shape)
        self.built = True

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped_cell(inputs, state, cell_call_fn=self.cell.__call__,
                                       scope=scope)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        raise NotImplementedError


def _default_dropout_state_filter_visitor(substate):
    """Dropout on every state part except an LSTM's memory `c` (and TensorArrays)."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return not isinstance(substate, TensorArray)


class DropoutWrapper(_RNNCellWrapper):
    """Dropout on the inputs, outputs and/or new state of `cell` (a fresh mask per step, or
    with `variational_recurrent` one mask per run, Gal & Ghahramani 2016). A keep
    probability of exactly 1.0 adds no op. Per-part seeds derive from `seed` as TF derives
    them (md5 of the seed and `input_0`, `state_1`, ...).

    Raises (constructor):
      ValueError: a constant keep probability outside [0, 1]; variational_recurrent
        without dtype (or without input_size when inputs are dropped).
      TypeError: a non-callable dropout_state_filter_visitor, or `cell` is not a cell.
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and \
                not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = (dropout_state_filter_visitor or
                                      _default_dropout_state_filter_visitor)
        with name_scope("DropoutWrapperInit"):
            for prob, attr in [(input_keep_prob, "input_keep_prob"),
                               (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")]:
                setattr(self, f"_{attr}", _keep_prob_value(prob, attr))
        self._variational_recurrent = variational_recurrent
        self._input_size, self._seed = input_size, seed
        self._recurrent_input_noise = None
        self._recurrent_state_noise = None
        self._recurrent_output_noise = None
        if variational_recurrent:
            self._make_recurrent_noise(cell, input_size, dtype)

    def _make_recurrent_noise(self, cell, input_size, dtype) -> None:
        if dtype is None:
            raise ValueError("When variational_recurrent=True, dtype must be provided")

        def batch_noise(s, inner_seed):
            shape = joining_ops.concat(([1], TensorShape(s).as_list()), 0)
            return random_ops.random_uniform(shape, seed=inner_seed, dtype=dtype)

        def noise_for(prefix, sizes):
            return _enumerated_map_up_to(
                sizes, lambda i, s: batch_noise(s, self._gen_seed(prefix, i)), sizes)

        if not isinstance(self._input_keep_prob, numbers.Real) or self._input_keep_prob < 1.0:
            if input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 "
                                 "or is unknown, input_size must be provided")
            self._recurrent_input_noise = noise_for("input", input_size)
        self._recurrent_state_noise = noise_for("state", cell.state_size)
        self._recurrent_output_noise = noise_for("output", cell.output_size)

    def _gen_seed(self, salt_prefix: str, index: int):
        if self._seed is None:
            return None
        salted = (str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")
        return int(hashlib.md5(salted).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _dropout(self, values, salt_prefix, recurrent_noise, keep_prob, shallow=None):
        shallow = values if shallow is None else shallow
        if not self._variational_recurrent:
            def drop(i, do_dropout, v):
                if not isinstance(do_dropout, bool) or do_dropout:
                    return random_ops.dropout(v, keep_prob=keep_prob,
                                              seed=self._gen_seed(salt_prefix, i))
                return v

            return _enumerated_map_up_to(shallow, drop, shallow, values)

        def drop_variational(i, do_dropout, v, noise):
            if not isinstance(do_dropout, bool) or do_dropout:
                ret = math_ops.divide(v, keep_prob) * math_ops.floor(keep_prob + noise)
                ret.set_shape(v.shape)
                return ret
            return v

        return _enumerated_map_up_to(shallow, drop_variational, shallow, values,
                                     recurrent_noise)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        if _should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise,
                                   self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if _should_dropout(self._state_keep_prob):
            shallow = _traverse_shallow_structure(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise,
                                      self._state_keep_prob, shallow)
        if _should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise,
                                   self._output_keep_prob)
        return output, new_state


def _keep_prob_value(prob, attr: str):
    """A Python float for a constant keep probability, else the tensor."""
    tensor = convert_to_tensor(prob)
    value = constant_value(tensor)
    if value is None:
        return tensor
    if value < 0 or value > 1:
        raise ValueError(f"Parameter {attr} must be between 0 and 1. Received {float(value):g}")
    return float(value)


def _should_dropout(p) -> bool:
    return not isinstance(p, float) or p < 1


class ResidualWrapper(_RNNCellWrapper):
    """Adds the cell's inputs to its outputs (`residual_fn(inputs, outputs)` if given)."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def default_residual_fn(inputs, outputs):
            assert_same_structure(inputs, outputs)
            map_structure(lambda i, o: i.shape.assert_is_compatible_with(o.shape),
                          inputs, outputs)
            return map_structure(lambda i, o: i + o, inputs, outputs)

        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(_RNNCellWrapper):
    """Runs the cell (and builds its zero state) on `device`."""

    def __init__(self, cell, device, **kwargs):  # noqa: A002 - TF's argument name
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"), device(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with device(self._device):
            return cell_call_fn(inputs, state, **kwargs)


# -- structures up to a shallow structure (nest.map_structure_up_to) -------------------------
def _flatten_up_to(shallow, structure) -> list:
    if not is_sequence(shallow):
        return [structure]
    if not is_sequence(structure) or len(_children(structure)) != len(_children(shallow)):
        raise ValueError(f"The structure {structure} does not match the shallow structure "
                         f"{shallow}")
    out: list = []
    for s, v in zip(_children(shallow), _children(structure)):
        out.extend(_flatten_up_to(s, v))
    return out


def _children(x) -> list:
    return [x[k] for k in sorted(x)] if isinstance(x, dict) else list(x)


def _enumerated_map_up_to(shallow, fn, *structures):
    """`fn(i, *leaves)` over the leaves of `shallow` (i counts them), packed like it."""
    flats = [_flatten_up_to(shallow, s) for s in structures]
    results = [fn(i, *xs) for i, xs in enumerate(zip(*flats))]
    return pack_sequence_as(shallow, results) if is_sequence(shallow) else results[0]


def _traverse_shallow_structure(traverse_fn, structure):
    """TF's nest.get_traverse_shallow_structure: bools (or substructures) saying where to
    descend; a False leaf stops descent.

    Raises:
      TypeError: traverse_fn returned something other than a bool (or, for a sequence, a
        structure of bools one level deep).
    """
    to_traverse = traverse_fn(structure)
    if not is_sequence(structure):
        if not isinstance(to_traverse, bool):
            raise TypeError(f"traverse_fn returned structure: {to_traverse} for non-structure: "
                            f"{structure}")
        return to_traverse
    children = _children(structure)
    if isinstance(to_traverse, bool):
        if not to_traverse:
            return False
        return _rebuild(structure, [_traverse_shallow_structure(traverse_fn, c)
                                    for c in children])
    branches = _children(to_traverse)
    out = []
    for branch, child in zip(branches, children):
        if not isinstance(branch, bool):
            raise TypeError(f"traverse_fn didn't return a depth=1 structure of bools.  saw: "
                            f"{to_traverse}  for structure: {structure}")
        out.append(_traverse_shallow_structure(traverse_fn, child) if branch else False)
    return _rebuild(structure, out)


def _rebuild(template, values: list):
    """`template`'s container type (one level) around `values`."""
    if isinstance(template, dict):
        return type(template)(zip(sorted(template), values))
    if hasattr(template, "_fields"):
        return type(template)(*values)
    return type(template)(values)


__all__ = ["MultiRNNCell", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]
