"""`tf.contrib.rnn` cells beyond the core ones (TF 1.15's contrib/rnn rnn_cell.py and
core_rnn_cell.py): `LayerNormBasicLSTMCell` (layer-normalized gates and state, Ba et al.
2016, with recurrent dropout), `AttentionCellWrapper` (attention over the last
`attn_length` outputs), `OutputProjectionWrapper`, `InputProjectionWrapper` and
`EmbeddingWrapper` (integer ids embedded before the cell, legacy_seq2seq's encoder).

Variable names are TF's: `layer_norm_basic_lstm_cell/kernel` (no bias with layer norm),
`.../input/gamma`, `.../input/beta` (and `transform`, `forget`, `output`, `state`);
a projection wrapper's `kernel` / `bias` sit in its own scope beside the wrapped cell's.
"""

from __future__ import annotations

from tensorweave.contrib.layers_norm import layer_norm
from tensorweave.ops import (
    array_ops,
    joining_ops,
    math_matmul_ops,
    math_ops,
    nn_ops,
    random_ops,
)
from tensorweave.ops import slicing_ops as slicing
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.control_flow_util import flatten, is_sequence
from tensorweave.ops.init_ops import constant_initializer
from tensorweave.training.rnn.cell_base import RNNCell
from tensorweave.training.rnn.cells import LSTMStateTuple


class LayerNormBasicLSTMCell(RNNCell):
    """`new_c = c·σ(LN(f) + forget_bias) + σ(LN(i))·dropout(tanh(LN(j)))`,
    `new_h = tanh(LN(new_c))·σ(LN(o))`, LN with gain `norm_gain` and shift `norm_shift`."""

    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=None,
                 layer_norm=True, norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0,
                 dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units, self._forget_bias = num_units, forget_bias
        self._activation = activation or math_ops.tanh
        self._layer_norm, self._norm_gain, self._norm_shift = layer_norm, norm_gain, norm_shift
        self._keep_prob, self._seed = dropout_keep_prob, dropout_prob_seed

    state_size = property(lambda self: LSTMStateTuple(self._num_units, self._num_units))
    output_size = property(lambda self: self._num_units)

    def _norm(self, inp, scope, dtype):
        shape = inp.shape[-1:]
        with vs.variable_scope(scope):
            vs.get_variable("gamma", shape=shape, dtype=dtype,
                            initializer=constant_initializer(self._norm_gain))
            vs.get_variable("beta", shape=shape, dtype=dtype,
                            initializer=constant_initializer(self._norm_shift))
        return layer_norm(inp, reuse=True, scope=scope)

    def _linear(self, args):
        out_size = 4 * self._num_units
        weights = vs.get_variable("kernel", [args.shape[-1], out_size], dtype=args.dtype)
        out = math_matmul_ops.matmul(args, weights)
        if not self._layer_norm:
            bias = vs.get_variable("bias", [out_size], dtype=args.dtype)
            out = nn_ops.bias_add(out, bias)
        return out

    def call(self, inputs, state):
        c, h = state
        args = joining_ops.concat([inputs, h], 1)
        dtype = args.dtype
        i, j, f, o = slicing.split(value=self._linear(args), num_or_size_splits=4, axis=1)
        if self._layer_norm:
            i, j = self._norm(i, "input", dtype), self._norm(j, "transform", dtype)
            f, o = self._norm(f, "forget", dtype), self._norm(o, "output", dtype)
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = random_ops.dropout(g, self._keep_prob, seed=self._seed)
        new_c = c * math_ops.sigmoid(f + self._forget_bias) + math_ops.sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state", dtype)
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


def _linear(args, output_size):
    """`concat(args) @ kernel + bias` with `kernel` and `bias` (zeros) in the current
    scope (core_rnn_cell's `_Linear`)."""
    if isinstance(args, (list, tuple)):
        args = joining_ops.concat(list(args), 1) if len(args) > 1 else args[0]
    kernel = vs.get_variable("kernel", [args.shape[-1], output_size], dtype=args.dtype)
    bias = vs.get_variable("bias", [output_size], dtype=args.dtype,
                           initializer=constant_initializer(0.0))
    return nn_ops.bias_add(math_matmul_ops.matmul(args, kernel), bias)


class _ProjectionWrapper(RNNCell):
    def __init__(self, cell, size, activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        if size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {size}.")
        self._cell, self._size, self._activation = cell, size, activation

    state_size = property(lambda self: self._cell.state_size)

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)


class OutputProjectionWrapper(_ProjectionWrapper):
    """`cell`'s output projected to `output_size` (kernel, bias) and `activation`."""

    output_size = property(lambda self: self._size)

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        projected = _linear(output, self._size)
        if self._activation:
            projected = self._activation(projected)
        return projected, new_state


class InputProjectionWrapper(_ProjectionWrapper):
    """Inputs projected to `num_proj` (kernel, bias) before `cell`."""

    def __init__(self, cell, num_proj, initializer=None, input_size=None, activation=None,
                 reuse=None):
        super().__init__(cell, num_proj, activation, reuse)

    output_size = property(lambda self: self._cell.output_size)

    def call(self, inputs, state):
        projected = _linear(inputs, self._size)
        if self._activation:
            projected = self._activation(projected)
        return self._cell(projected, state)


class EmbeddingWrapper(RNNCell):
    """Integer `inputs` [batch] (or [batch, 1]) looked up in an `embedding`
    [embedding_classes, embedding_size] variable of the wrapper's scope, then `cell`. The
    default initializer is uniform on +-sqrt(3) (variance 1), as TF's."""

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        super().__init__(_reuse=reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(f"Both embedding_classes and embedding_size must be > 0: "
                             f"{embedding_classes}, {embedding_size}.")
        self._cell, self._classes, self._size = cell, embedding_classes, embedding_size
        self._initializer = initializer

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state):
        from tensorweave.ops.embedding_ops import embedding_lookup
        from tensorweave.ops.init_ops import random_uniform_initializer

        initializer = self._initializer or vs.get_variable_scope().initializer or \
            random_uniform_initializer(-3 ** 0.5, 3 ** 0.5)
        dtype = flatten(state)[0].dtype
        embedding = vs.get_variable("embedding", [self._classes, self._size],
                                    initializer=initializer, dtype=dtype)
        embedded = embedding_lookup(embedding, array_ops.reshape(inputs, [-1]))
        return self._cell(embedded, state)


class AttentionCellWrapper(RNNCell):
    """Attends over a window of the cell's last `attn_length` outputs (Bahdanau-style, a
    1x1 convolution of the window and a projection of the new state). State:
    (cell state, attention [attn_size], window [attn_size * attn_length]).

    Raises:
      ValueError: a tuple cell state without `state_is_tuple`, or attn_length <= 0.
    """

    def __init__(self, cell, attn_length, attn_size=None, attn_vec_size=None,
                 input_size=None, state_is_tuple=True, reuse=None):
        super().__init__(_reuse=reuse)
        if is_sequence(cell.state_size) and not state_is_tuple:
            raise ValueError(f"Cell returns tuple of states, but the flag state_is_tuple is "
                             f"not set. State size is: {cell.state_size}")
        if attn_length <= 0:
            raise ValueError(f"attn_length should be greater than zero, got {attn_length}")
        self._cell, self._attn_length = cell, attn_length
        self._attn_size = attn_size if attn_size is not None else cell.output_size
        self._attn_vec_size = attn_vec_size if attn_vec_size is not None else self._attn_size
        self._input_size, self._state_is_tuple = input_size, state_is_tuple

    @property
    def state_size(self):
        size = (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)
        return size if self._state_is_tuple else sum(size)

    output_size = property(lambda self: self._attn_size)

    def call(self, inputs, state):
        if self._state_is_tuple:
            state, attns, attn_states = state
        else:
            sizes = [self._cell.state_size, self._attn_size,
                     self._attn_size * self._attn_length]
            state, attns, attn_states = slicing.split(state, sizes, axis=1)
        attn_states = array_ops.reshape(attn_states, [-1, self._attn_length, self._attn_size])
        input_size = self._input_size or inputs.shape.as_list()[1]
        inputs = _linear([inputs, attns], input_size)
        cell_output, new_state = self._cell(inputs, state)
        new_state_cat = joining_ops.concat(flatten(new_state), 1) if self._state_is_tuple \
            else new_state
        new_attns, new_attn_states = self._attention(new_state_cat, attn_states)
        with vs.variable_scope("attn_output_projection"):
            output = _linear([cell_output, new_attns], self._attn_size)
        new_attn_states = joining_ops.concat(
            [new_attn_states, array_ops.expand_dims(output, 1)], 1)
        new_attn_states = array_ops.reshape(new_attn_states,
                                            [-1, self._attn_length * self._attn_size])
        new_state = (new_state, new_attns, new_attn_states)
        if not self._state_is_tuple:
            new_state = joining_ops.concat(list(new_state), 1)
        return output, new_state

    def _attention(self, query, attn_states):
        from tensorweave.ops import nn_conv, reduction_ops

        with vs.variable_scope("attention"):
            k = vs.get_variable("attn_w", [1, 1, self._attn_size, self._attn_vec_size])
            v = vs.get_variable("attn_v", [self._attn_vec_size])
            hidden = array_ops.reshape(attn_states, [-1, self._attn_length, 1, self._attn_size])
            hidden_features = nn_conv.conv2d(hidden, k, [1, 1, 1, 1], "SAME")
            y = array_ops.reshape(_linear(query, self._attn_vec_size),
                                  [-1, 1, 1, self._attn_vec_size])
            s = reduction_ops.reduce_sum(v * math_ops.tanh(hidden_features + y), [2, 3])
            a = nn_ops.softmax(s)
            d = reduction_ops.reduce_sum(
                array_ops.reshape(a, [-1, self._attn_length, 1, 1]) * hidden, [1, 2])
            new_attns = array_ops.reshape(d, [-1, self._attn_size])
            new_attn_states = slicing.slice(attn_states, [0, 1, 0], [-1, -1, -1])
            return new_attns, new_attn_states
