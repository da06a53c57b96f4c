"""Keras Embedding: integer ids → rows of `embeddings` [input_dim, output_dim]
(U(-0.05, 0.05) by default), gathered with `embedding_lookup` (sparse gradients)."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.keras import initializers
from tensorweave.keras.engine.base_layer import Layer, keras_layer
from tensorweave.ops import math_ops, nn_impl


@keras_layer
class Embedding(Layer):
    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, input_length=None, **kwargs):
        if "input_shape" not in kwargs and input_length is not None:
            kwargs["input_shape"] = (input_length,)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero, self.input_length = mask_zero, input_length

    def build(self, input_shape) -> None:
        self.embeddings = self.add_weight(
            "embeddings", [self.input_dim, self.output_dim],
            initializer=self.embeddings_initializer, regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint, dtype=dtypes.float32)
        self.built = True

    def call(self, inputs):
        if inputs.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            inputs = math_ops.cast(inputs, dtypes.int32)
        return nn_impl.embedding_lookup(self.embeddings, inputs)
