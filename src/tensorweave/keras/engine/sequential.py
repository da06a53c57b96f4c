"""`tf.keras.Sequential`: a linear stack of layers. The model becomes a functional model as
soon as its input shape is known: from the first layer's `input_shape` (an `InputLayer`
placeholder is made then), or on the first call or `fit`."""

from __future__ import annotations

from tensorweave.keras.engine.input_layer import Input, InputLayer
from tensorweave.keras.engine.training import Model


class Sequential(Model):
    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._stack: list = []
        self._is_graph_network = False
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self) -> list:
        return [layer for layer in self._stack if not isinstance(layer, InputLayer)]

    def add(self, layer) -> None:
        """Appends `layer`; with a known input shape, calls it on the model's output so far.

        Raises:
          TypeError: not a layer.
        """
        from tensorweave.keras.engine.base_layer import Layer

        if not isinstance(layer, Layer):
            raise TypeError("The added layer must be an instance of class Layer. Found: "
                            f"{layer}")
        self._stack.append(layer)
        if isinstance(layer, InputLayer):
            self._connect(layer.inbound_nodes[0].outputs[0], self._stack[:-1])
        elif self._is_graph_network:
            self._graph_from(self.inputs, layer(self.outputs[0]))
        elif len(self._stack) == 1 and layer._batch_input_shape is not None:
            x = Input(batch_shape=layer._batch_input_shape, dtype=layer.dtype,
                      name=f"{layer.name}_input")
            self._connect(x, self._stack)

    def _connect(self, x, layers) -> None:
        inputs, y = x, x
        for layer in layers:
            y = layer(y)
        self._graph_from([inputs], y)

    def _graph_from(self, inputs, outputs) -> None:
        self._init_graph(inputs[0] if len(inputs) == 1 else inputs, outputs)
        self._layers = self.layers

    def pop(self) -> None:
        if not self.layers:
            raise TypeError("There are no layers in the model.")
        self._stack.pop()
        if self._is_graph_network:
            inputs = self.inputs
            self._is_graph_network = False
            if self.layers:
                self._connect(inputs[0], self.layers)

    def build(self, input_shape=None) -> None:
        if not self._is_graph_network and input_shape is not None:
            self._connect(Input(batch_shape=tuple(input_shape)), self.layers)
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        """Applies the layers; an unbuilt model is built on `inputs` itself first."""
        if not self._is_graph_network:
            self._connect(Input(tensor=inputs), self.layers)
            return self.outputs[0]
        return super().__call__(inputs, *args, **kwargs)

    def _build_on(self, inputs) -> None:
        self._connect(inputs, self.layers)

    def get_config(self) -> dict:
        return {"name": self.name, "layers": [{"class_name": type(layer).__name__,
                                               "config": layer.get_config()}
                                              for layer in self.layers]}

    def predict_classes(self, x, batch_size=32, verbose=0):
        proba = self.predict(x, batch_size=batch_size)
        return (proba > 0.5).astype("int32") if proba.shape[-1] == 1 else proba.argmax(-1)

    def predict_proba(self, x, batch_size=32, verbose=0):
        return self.predict(x, batch_size=batch_size)


__all__ = ["Sequential"]
