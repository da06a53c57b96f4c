"""Keras layer wrappers: TimeDistributed (the layer on every timestep, as one call on the
batch-and-time-flattened input) and Bidirectional (a forward and a backward RNN)."""

from __future__ import annotations

import copy

from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import array_ops, joining_ops


class Wrapper(Layer):
    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        self.layer = layer

    @property
    def trainable_weights(self):
        return self.layer.trainable_weights

    @property
    def non_trainable_weights(self):
        return self.layer.non_trainable_weights

    @property
    def updates(self):
        return self.layer.updates


@keras_layer
class TimeDistributed(Wrapper):
    def call(self, inputs, training=None):
        shape = array_ops.shape(inputs)
        flat = array_ops.reshape(inputs, joining_ops.concat([[-1], shape[2:]], 0))
        out = self.layer(flat)
        out_shape = array_ops.shape(out)
        return array_ops.reshape(out, joining_ops.concat([shape[:2], out_shape[1:]], 0))


@keras_layer
class Bidirectional(Wrapper):
    """`merge_mode` "concat" (default), "sum", "mul", "ave" or None (a list of both)."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        super().__init__(layer, **kwargs)
        self.forward_layer = layer
        self.backward_layer = backward_layer or copy.copy(layer)
        if backward_layer is None:
            cls = type(layer)
            config = dict(getattr(layer, "_init_config", {}))
            config["go_backwards"] = not layer.go_backwards
            config.pop("name", None)
            self.backward_layer = cls(**config, name=f"backward_{layer.name}")
        self.merge_mode = merge_mode

    @property
    def trainable_weights(self):
        return self.forward_layer.trainable_weights + self.backward_layer.trainable_weights

    @property
    def non_trainable_weights(self):
        return []

    @property
    def updates(self):
        return []

    def call(self, inputs, training=None):
        fwd, bwd = self.forward_layer(inputs), self.backward_layer(inputs)
        if getattr(self.forward_layer, "return_sequences", False):
            bwd = joining_ops.reverse(bwd, [1])
        if self.merge_mode == "concat":
            return K.concatenate([fwd, bwd], axis=-1)
        if self.merge_mode == "sum":
            return fwd + bwd
        if self.merge_mode == "mul":
            return fwd * bwd
        if self.merge_mode == "ave":
            return (fwd + bwd) / 2.0
        return [fwd, bwd]
