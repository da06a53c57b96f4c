"""Keras recurrent layers (SimpleRNN, GRU, LSTM, each with its Cell, and the generic `RNN`
over any cell), on time-major `scan` (a `while_loop`, differentiable the TF1 way).

Weights and math are Keras's: `kernel` [in, k*units], `recurrent_kernel` [units, k*units],
`bias` [k*units]; LSTM gates in the order i, f, c, o with `unit_forget_bias` (the forget
bias starts at one) and GRU's z, r, h (reset before the recurrent product, TF 1.x's
`reset_after=False`); TF 1.15's defaults: `recurrent_activation="hard_sigmoid"`.
`return_sequences`, `return_state` and `go_backwards` as Keras. `dropout` and
`recurrent_dropout` drop the same units of the inputs / the recurrent state at every step of a
sequence in the training phase (one mask each, shared by the gates, where Keras may draw one
per gate). A Keras mask on the inputs (Embedding's `mask_zero`, Masking) holds the state and
the output over masked steps; the output sequence keeps the mask.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.keras import activations, initializers
from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import (
    array_ops,
    creation_ops,
    gather_ops,
    joining_ops,
    math_matmul_ops,
    math_ops,
)
from tensorweave.ops.functional_ops import scan
from tensorweave.ops.init_ops import Constant


class _Cell(Layer):
    """A cell: `step(x, states) -> (output, new_states)`; `gates` blocks of `units`."""

    gates = 1

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, dropout=0.0, recurrent_dropout=0.0,
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 implementation=1, reset_after=False, **kwargs):
        if reset_after:
            raise NotImplementedError("GRU(reset_after=True) (the cuDNN-compatible GRU of TF "
                                      "2.x) is not supported; TF 1.x's default is False")
        super().__init__(**kwargs)
        self._weight_args = {
            "kernel": {"regularizer": kernel_regularizer, "constraint": kernel_constraint},
            "recurrent_kernel": {"regularizer": recurrent_regularizer,
                                 "constraint": recurrent_constraint},
            "bias": {"regularizer": bias_regularizer, "constraint": bias_constraint}}
        self.units = int(units)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias, self.unit_forget_bias = use_bias, unit_forget_bias
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    @property
    def state_size(self):
        return self.units

    def build(self, input_shape) -> None:
        dim = int(input_shape[-1])
        n = self.gates * self.units
        self.kernel = self.add_weight("kernel", [dim, n], initializer=self.kernel_initializer,
                                      **self._weight_args["kernel"])
        self.recurrent_kernel = self.add_weight("recurrent_kernel", [self.units, n],
                                                initializer=self.recurrent_initializer,
                                                **self._weight_args["recurrent_kernel"])
        self.bias = self.add_weight("bias", [n], initializer=self._bias_init(),
                                    **self._weight_args["bias"]) if self.use_bias else None
        self.built = True

    def _bias_init(self):
        return self.bias_initializer

    def _input_part(self, x):
        z = math_matmul_ops.matmul(x, self.kernel)
        return z + self.bias if self.bias is not None else z

    def _block(self, t, k: int):
        return t[:, k * self.units:(k + 1) * self.units]


@keras_layer
class SimpleRNNCell(_Cell):
    def __init__(self, units, activation="tanh", **kwargs):
        super().__init__(units, activation=activation, **kwargs)

    def step(self, x, states):
        h = self.activation(self._input_part(x) +
                            math_matmul_ops.matmul(states[0], self.recurrent_kernel))
        return h, [h]


@keras_layer
class GRUCell(_Cell):
    gates = 3

    def step(self, x, states):
        h = states[0]
        zx, u = self._input_part(x), self.recurrent_kernel
        zr = math_matmul_ops.matmul(h, u[:, :2 * self.units])
        z = self.recurrent_activation(self._block(zx, 0) + zr[:, :self.units])
        r = self.recurrent_activation(self._block(zx, 1) + zr[:, self.units:])
        hh = self.activation(self._block(zx, 2) +
                             math_matmul_ops.matmul(r * h, u[:, 2 * self.units:]))
        new = z * h + (1.0 - z) * hh
        return new, [new]


@keras_layer
class LSTMCell(_Cell):
    gates = 4

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        import numpy as np

        value = np.zeros(4 * self.units, np.float32)
        value[self.units:2 * self.units] = 1.0
        return Constant(value)

    def step(self, x, states):
        h, c = states
        z = self._input_part(x) + math_matmul_ops.matmul(h, self.recurrent_kernel)
        i = self.recurrent_activation(self._block(z, 0))
        f = self.recurrent_activation(self._block(z, 1))
        c = f * c + i * self.activation(self._block(z, 2))
        o = self.recurrent_activation(self._block(z, 3))
        h = o * self.activation(c)
        return h, [h, c]


@keras_layer
class RNN(Layer):
    """Runs `cell` over the time axis of (batch, time, features) inputs."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards = go_backwards

    def build(self, input_shape) -> None:
        """Builds the cell in this layer's scope: its weights are `<layer>/kernel`, ..."""
        shape = input_shape.as_list()
        self.cell._scope, self.cell._current_scope = self._scope, self._current_scope
        self.cell._dtype = self._dtype
        self.cell.build([shape[0], shape[-1]])
        self._trainable_weights.extend(self.cell.trainable_weights)
        self._losses.extend(self.cell.losses)   # the cell's weight regularizers
        self.built = True

    def compute_mask(self, inputs, mask=None):
        return mask if self.return_sequences else None

    def call(self, inputs, mask=None, initial_state=None, training=None):
        batch = array_ops.shape(inputs)[0]
        sizes = self.cell.state_size if isinstance(self.cell.state_size, list) else \
            [self.cell.state_size]
        dtype = inputs.dtype.base_dtype
        states = list(initial_state) if initial_state is not None else [
            creation_ops.zeros(joining_ops.stack([batch, s]), dtype=dtype) for s in sizes]
        time_major = joining_ops.transpose(inputs, [1, 0, 2])
        in_mask = _dropout_mask(inputs[:, 0, :], self.cell.dropout, training)
        rec_mask = _dropout_mask(states[0], self.cell.recurrent_dropout, training)

        def step(carry, elems):
            x, keep = elems if mask is not None else (elems, None)
            prev = list(carry[1:])
            if in_mask is not None:
                x = x * in_mask
            held = [prev[0] * rec_mask, *prev[1:]] if rec_mask is not None else prev
            out, new = self.cell.step(x, held)
            if keep is not None:   # a masked step keeps the state and the last output
                out = gather_ops.where(keep, out, carry[0])
                new = [gather_ops.where(keep, n, p) for n, p in zip(new, prev)]
            return (out, *new)

        first = (creation_ops.zeros(joining_ops.stack([batch, self.cell.units]), dtype=dtype),
                 *states)
        elems = time_major
        if mask is not None:
            keep = joining_ops.transpose(math_ops.cast(mask, dtypes.bool_), [1, 0])
            keep = joining_ops.tile(array_ops.expand_dims(keep, -1), [1, 1, self.cell.units])
            elems = (time_major, keep)
        outs = scan(step, elems, initializer=first, reverse=self.go_backwards)
        sequence = joining_ops.transpose(outs[0], [1, 0, 2])
        last = [o[-1] if not self.go_backwards else o[0] for o in outs]
        output = sequence if self.return_sequences else last[0]
        return [output, *last[1:]] if self.return_state else output


def _dropout_mask(like, rate: float, training):
    """A mask of ones with `rate` of its entries zeroed and the rest scaled by 1/(1-rate),
    in the training phase (ones otherwise); None without dropout."""
    if not rate or training is False:
        return None
    ones = creation_ops.ones_like(like)
    return K.in_train_phase(lambda: K.dropout(ones, rate), ones, training=training)


def _rnn_layer(cell_cls, default_recurrent="hard_sigmoid"):
    class Layer_(RNN):
        def __init__(self, units, activation="tanh", recurrent_activation=default_recurrent,
                     use_bias=True, kernel_initializer="glorot_uniform",
                     recurrent_initializer="orthogonal", bias_initializer="zeros",
                     unit_forget_bias=True, return_sequences=False, return_state=False,
                     go_backwards=False, stateful=False, unroll=False, dropout=0.0,
                     recurrent_dropout=0.0, **kwargs):
            cell_kwargs = {k: kwargs.pop(k) for k in list(kwargs)
                           if k.endswith(("_regularizer", "_constraint")) or
                           k in ("implementation", "reset_after")}
            cell = cell_cls(units, activation=activation,
                            recurrent_activation=recurrent_activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer,
                            recurrent_initializer=recurrent_initializer,
                            bias_initializer=bias_initializer,
                            unit_forget_bias=unit_forget_bias, dropout=dropout,
                            recurrent_dropout=recurrent_dropout, **cell_kwargs)
            super().__init__(cell, return_sequences=return_sequences,
                             return_state=return_state, go_backwards=go_backwards, **kwargs)
            self.units = units

    return Layer_


SimpleRNN = keras_layer(type("SimpleRNN", (_rnn_layer(SimpleRNNCell),), {}))
GRU = keras_layer(type("GRU", (_rnn_layer(GRUCell),), {}))
LSTM = keras_layer(type("LSTM", (_rnn_layer(LSTMCell),), {}))
