"""`tf.keras.Input` / `InputLayer`: a placeholder that starts a functional model."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.ops import array_ops


class InputLayer(Layer):
    """Holds the placeholder (`input_1`, ...) or the tensor given as `input_tensor`."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None,
                 sparse=False, name=None, **kwargs):
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        if name is None:
            name = f"input_{K.get_uid('input')}"
        super().__init__(name=name, dtype=dtype or K.floatx())
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size, *tuple(input_shape))
        if input_tensor is None:
            input_tensor = array_ops.placeholder(dtypes.as_dtype(self.dtype),
                                                 shape=batch_input_shape, name=name)
        self._batch_input_shape = K.int_shape(input_tensor)
        self.built = True
        self.is_placeholder = K.is_placeholder(input_tensor)
        self._record([], [input_tensor], {})

    def get_config(self) -> dict:
        return {"batch_input_shape": self._batch_input_shape, "dtype": self.dtype.name,
                "sparse": False, "name": self.name}


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=False, tensor=None,
          batch_shape=None, **kwargs):  # noqa: N802 - Keras's name
    """A placeholder of shape (batch_size, *shape) that functional models start from."""
    if shape is None and batch_shape is None and tensor is None:
        raise ValueError("Please provide to Input either a `shape` or a `batch_shape` "
                         "argument. Note that `shape` does not include the batch dimension.")
    layer = InputLayer(input_shape=shape, batch_size=batch_size, name=name, dtype=dtype,
                       input_tensor=tensor, batch_input_shape=batch_shape)
    return layer.inbound_nodes[0].outputs[0]
