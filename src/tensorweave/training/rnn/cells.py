"""TF1's basic RNN cells (rnn_cell_impl): BasicRNNCell, GRUCell, BasicLSTMCell, LSTMCell and
LSTMStateTuple, with TF1's variable names and the same op sequence, so checkpoints and
numbers carry over:

    basic_rnn_cell/{kernel, bias}              h' = act([x, h] W + b)
    gru_cell/{gates, candidate}/{kernel, bias}  r, u = σ([x, h] Wg + bg); c = act([x, r*h] Wc + bc)
                                                h' = u * h + (1 - u) * c
    basic_lstm_cell/{kernel, bias}              i, j, f, o = split([x, h] W + b)
    lstm_cell/{kernel, bias, w_f_diag, w_i_diag, w_o_diag, projection/kernel}
"""

from __future__ import annotations

from collections import namedtuple

from tensorweave import dtypes
from tensorweave.ops import joining_ops, math_matmul_ops, math_ops, nn_ops
from tensorweave.ops import slicing_ops as slicing
from tensorweave.ops.constant_op import constant
from tensorweave.ops.init_ops import constant_initializer, zeros_initializer
from tensorweave.training.layers.utils import InputSpec, get_activation, get_initializer
from tensorweave.training.rnn.cell_base import (
    LayerRNNCell,
    check_rnn_cell_input_dtypes,
    check_supported_dtypes,
    input_depth,
)

_WEIGHTS, _BIAS = "kernel", "bias"


class _SimpleCell(LayerRNNCell):
    """Shared constructor: units, activation (default tanh), 2-D input spec."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        check_supported_dtypes(self.dtype)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = get_activation(activation) if activation else math_ops.tanh

    @property
    def output_size(self):
        return self._num_units

    def _zeros(self):
        return zeros_initializer(dtype=self.dtype)


class BasicRNNCell(_SimpleCell):
    """The most basic RNN cell: `output = new_state = act([inputs, state] W + b)`."""

    @property
    def state_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = input_depth(inputs_shape)
        check_supported_dtypes(self.dtype)
        self._kernel = self.add_weight(_WEIGHTS, shape=[depth + self._num_units,
                                                        self._num_units])
        self._bias = self.add_weight(_BIAS, shape=[self._num_units], initializer=self._zeros())
        self.built = True

    def call(self, inputs, state):
        check_rnn_cell_input_dtypes([inputs, state])
        gate_inputs = math_matmul_ops.matmul(joining_ops.concat([inputs, state], 1),
                                             self._kernel)
        output = self._activation(nn_ops.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(_SimpleCell):
    """Gated Recurrent Unit cell (Cho et al., 2014). The gate bias starts at 1.0 unless
    `bias_initializer` is given."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(num_units, activation, reuse, name, dtype, **kwargs)
        self._kernel_initializer = get_initializer(kernel_initializer)
        self._bias_initializer = get_initializer(bias_initializer)

    @property
    def state_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = input_depth(inputs_shape)
        check_supported_dtypes(self.dtype)
        n, k_init, b_init = self._num_units, self._kernel_initializer, self._bias_initializer
        self._gate_kernel = self.add_weight(f"gates/{_WEIGHTS}", shape=[depth + n, 2 * n],
                                            initializer=k_init)
        self._gate_bias = self.add_weight(
            f"gates/{_BIAS}", shape=[2 * n],
            initializer=b_init if b_init is not None else constant_initializer(
                1.0, dtype=self.dtype))
        self._candidate_kernel = self.add_weight(f"candidate/{_WEIGHTS}",
                                                 shape=[depth + n, n], initializer=k_init)
        self._candidate_bias = self.add_weight(
            f"candidate/{_BIAS}", shape=[n],
            initializer=b_init if b_init is not None else self._zeros())
        self.built = True

    def call(self, inputs, state):
        check_rnn_cell_input_dtypes([inputs, state])
        gate_inputs = math_matmul_ops.matmul(joining_ops.concat([inputs, state], 1),
                                             self._gate_kernel)
        value = math_ops.sigmoid(nn_ops.bias_add(gate_inputs, self._gate_bias))
        r, u = slicing.split(value=value, num_or_size_splits=2, axis=1)
        candidate = math_matmul_ops.matmul(joining_ops.concat([inputs, r * state], 1),
                                           self._candidate_kernel)
        c = self._activation(nn_ops.bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


_LSTMStateTuple = namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTuple):
    """`(c, h)`: the LSTM memory `c` and output `h`, in that order."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


class _LSTMBase(_SimpleCell):
    def _split_state(self, state, c_size: int, h_size: int, split_axis=None):
        """(c, h) of a tuple state, or from a concatenated one: split along `split_axis`
        (BasicLSTMCell) or sliced (LSTMCell)."""
        if self._state_is_tuple:
            return state
        if split_axis is not None:
            return slicing.split(value=state, num_or_size_splits=2, axis=split_axis)
        return (slicing.slice(state, [0, 0], [-1, c_size]),
                slicing.slice(state, [0, c_size], [-1, h_size]))

    def _join_state(self, c, h):
        return LSTMStateTuple(c, h) if self._state_is_tuple else joining_ops.concat([c, h], 1)


class BasicLSTMCell(_LSTMBase):
    """Basic LSTM cell (Zaremba et al., 2014): no peepholes, no clipping, no projection;
    `forget_bias` is added to the forget gate's pre-activation."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(num_units, activation, reuse, name, dtype, **kwargs)
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    def build(self, inputs_shape):
        depth = input_depth(inputs_shape)
        check_supported_dtypes(self.dtype)
        n = self._num_units
        self._kernel = self.add_weight(_WEIGHTS, shape=[depth + n, 4 * n])
        self._bias = self.add_weight(_BIAS, shape=[4 * n], initializer=self._zeros())
        self.built = True

    def call(self, inputs, state):
        """One step: returns `(new_h, new_state)`."""
        check_rnn_cell_input_dtypes([inputs, state])
        sigmoid, add, multiply = math_ops.sigmoid, math_ops.add, math_ops.multiply
        one = constant(1, dtype=dtypes.int32)
        c, h = self._split_state(state, self._num_units, self._num_units, split_axis=one)
        gate_inputs = math_matmul_ops.matmul(joining_ops.concat([inputs, h], 1), self._kernel)
        gate_inputs = nn_ops.bias_add(gate_inputs, self._bias)
        i, j, f, o = slicing.split(value=gate_inputs, num_or_size_splits=4, axis=one)
        forget_bias = constant(self._forget_bias, dtype=f.dtype)
        new_c = add(multiply(c, sigmoid(add(f, forget_bias))),
                    multiply(sigmoid(i), self._activation(j)))
        new_h = multiply(self._activation(new_c), sigmoid(o))
        return new_h, self._join_state(new_c, new_h)


class LSTMCell(_LSTMBase):
    """LSTM cell with optional peepholes (`use_peepholes`, Sak et al., 2014), cell clipping
    (`cell_clip`) and an output projection (`num_proj`, clipped to `proj_clip`)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(num_units, activation, reuse, name, dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("num_unit_shards / num_proj_shards (deprecated in TF): "
                                      "use a variable_scope partitioner instead")
        self._use_peepholes, self._cell_clip = use_peepholes, cell_clip
        self._initializer = get_initializer(initializer)
        self._num_proj, self._proj_clip = num_proj, proj_clip
        self._forget_bias, self._state_is_tuple = forget_bias, state_is_tuple
        h = num_proj if num_proj else num_units
        self._state_size = LSTMStateTuple(num_units, h) if state_is_tuple else num_units + h
        self._output_size = h

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, inputs_shape):
        depth = input_depth(inputs_shape)
        check_supported_dtypes(self.dtype)
        n, init = self._num_units, self._initializer
        h_depth = n if self._num_proj is None else self._num_proj
        self._kernel = self.add_weight(_WEIGHTS, shape=[depth + h_depth, 4 * n],
                                       initializer=init)
        self._bias = self.add_weight(_BIAS, shape=[4 * n], initializer=self._zeros())
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", shape=[n], initializer=init)
            self._w_i_diag = self.add_weight("w_i_diag", shape=[n], initializer=init)
            self._w_o_diag = self.add_weight("w_o_diag", shape=[n], initializer=init)
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight(f"projection/{_WEIGHTS}",
                                                shape=[n, self._num_proj], initializer=init)
        self.built = True

    def call(self, inputs, state):
        """One step: returns `(m, new_state)`, m of width num_proj (or num_units).

        Raises:
          ValueError: the input depth is not known statically.
        """
        check_rnn_cell_input_dtypes([inputs, state])
        n = self._num_units
        num_proj = n if self._num_proj is None else self._num_proj
        c_prev, m_prev = self._split_state(state, n, num_proj)
        if inputs.shape.with_rank(2).as_list()[1] is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
        lstm_matrix = math_matmul_ops.matmul(joining_ops.concat([inputs, m_prev], 1),
                                             self._kernel)
        lstm_matrix = nn_ops.bias_add(lstm_matrix, self._bias)
        i, j, f, o = slicing.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        c = self._new_c(i, j, f, c_prev)
        m = self._new_m(o, c)
        return m, self._join_state(c, m)

    def _new_c(self, i, j, f, c_prev):
        sigmoid = math_ops.sigmoid
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev +
                 sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_matmul_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        return c

    def _new_m(self, o, c):
        sigmoid = math_ops.sigmoid
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_matmul_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_matmul_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        return m


__all__ = ["BasicRNNCell", "GRUCell", "LSTMStateTuple", "BasicLSTMCell", "LSTMCell"]
