"""Models as layers of layers: the functional graph (`Model(inputs, outputs)`) and
subclassed models (layers assigned as attributes, a `call` method).

A functional model finds its layer calls by walking back from its outputs through the nodes
the layers recorded (`base_layer.producer`) to its inputs; calling the model on new tensors
calls the same layers again in that order (their weights are shared). A subclassed model
tracks the layers (and models) assigned to its attributes, in assignment order.
"""

from __future__ import annotations

from tensorweave.framework.operation import Tensor
from tensorweave.keras import backend as K
from tensorweave.keras.engine.base_layer import Layer, Node, producer, to_list


def _walk(outputs: list, inputs: list) -> list[Node]:
    """The nodes that compute `outputs` from `inputs`, each after the nodes it reads from.

    Raises:
      ValueError: an output depends on a tensor that is neither an input nor a layer's output.
    """
    stop = {id(t) for t in inputs}
    seen: set[int] = set()
    order: list[Node] = []

    def visit(t) -> None:
        if id(t) in stop:
            return
        found = producer(t)
        if found is None:
            raise ValueError(f"Graph disconnected: cannot obtain value for tensor {t} at "
                             "layer. It is not an input of the model and no Keras layer "
                             "produced it.")
        node = found[0]
        if not node.inputs:   # an InputLayer that is not one of the model's inputs
            raise ValueError(f"Graph disconnected: cannot obtain value for tensor {t} at "
                             f"layer {node.layer.name!r}: it is not one of the model's inputs.")
        if id(node) in seen:
            return
        seen.add(id(node))
        for i in node.inputs:
            if isinstance(i, Tensor):
                visit(i)
        order.append(node)

    for t in outputs:
        visit(t)
    return order


class Network(Layer):
    """A functional model (`Network(inputs, outputs)`) or, without them, a subclassed one."""

    _tracked: list   # layers assigned to attributes (a subclassed model's)

    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", args[0] if args else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        object.__setattr__(self, "_tracked", [])
        super().__init__(name=kwargs.pop("name", None), trainable=kwargs.pop("trainable", True))
        self._is_graph_network = inputs is not None
        if self._is_graph_network:
            self._init_graph(inputs, outputs)

    def _init_graph(self, inputs, outputs) -> None:
        self._is_graph_network = True
        self._nested_inputs, self._nested_outputs = inputs, outputs
        self.inputs, self.outputs = to_list(inputs), to_list(outputs)
        self._nodes = _walk(self.outputs, self.inputs)
        self.input_names = [producer(t)[0].layer.name if producer(t) else t.op.name
                            for t in self.inputs]
        self.output_names = [producer(t)[0].layer.name for t in self.outputs]
        input_layers = [producer(t)[0].layer for t in self.inputs if producer(t)]
        self._layers = input_layers + [n.layer for n in self._nodes]
        self._layers = list(dict.fromkeys(self._layers))
        self.built = True

    def __setattr__(self, name, value) -> None:
        if isinstance(value, Layer) and not name.startswith("_") and \
                all(value is not t for t in self._tracked):
            self._tracked.append(value)
        super().__setattr__(name, value)

    @property
    def input(self):
        if not self._is_graph_network:
            return super().input
        return self.inputs[0] if len(self.inputs) == 1 else self.inputs

    @property
    def output(self):
        if not self._is_graph_network:
            return super().output
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs

    @property
    def input_shape(self):
        shapes = [K.int_shape(t) for t in to_list(self.input)]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [K.int_shape(t) for t in to_list(self.output)]
        return shapes[0] if len(shapes) == 1 else shapes

    # -- layers and weights -----------------------------------------------------------------------
    @property
    def layers(self) -> list:
        return list(self._layers) if self._is_graph_network else list(self._tracked)

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}")

    def _gather(self, attr: str) -> list:
        out, seen = [], set()
        for layer in self.layers:
            for w in getattr(layer, attr):
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    @property
    def trainable_weights(self) -> list:
        return self._gather("trainable_weights") if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        if not self.trainable:
            return self._gather("weights")
        return self._gather("non_trainable_weights")

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    @property
    def updates(self) -> list:
        return self._gather("updates")

    @property
    def losses(self) -> list:
        return self._gather("losses") + list(self._losses)

    # -- calling ----------------------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        if not self._is_graph_network:
            return super().__call__(inputs, *args, **kwargs)
        outputs = self.call(inputs, **kwargs)
        self._record(to_list(inputs), to_list(outputs), {})
        return outputs

    def call(self, inputs, training=None, mask=None):
        """Applies the model's layers to new `inputs` (as its inputs were given)."""
        if not self._is_graph_network:
            raise NotImplementedError("A subclassed Model must implement call()")
        new = dict(zip((id(t) for t in self.inputs), to_list(inputs)))
        for node in self._nodes:
            args = [new.get(id(t), t) for t in node.inputs]
            kwargs = dict(node.kwargs)
            if training is not None and node.layer._expects_training_arg:
                kwargs["training"] = training
            outs = node.layer(args if len(args) > 1 else args[0], **kwargs)
            new.update(zip((id(t) for t in node.outputs), to_list(outs)))
        outputs = [new[id(t)] for t in self.outputs]
        return outputs[0] if len(outputs) == 1 else outputs

    def build(self, input_shape) -> None:
        self.built = True

    def compute_output_shape(self, input_shape):
        return self.output_shape

    # -- description ------------------------------------------------------------------------------
    def summary(self, line_length=None, positions=None, print_fn=None) -> None:
        """Prints each layer's name and type, output shape and parameter count, and totals."""
        print_fn = print_fn or print
        width = line_length or 65
        cols = [int(width * p) for p in (positions or (0.45, 0.85, 1.0))]
        print_fn(f'Model: "{self.name}"')
        print_fn("_" * width)
        print_fn(_row(["Layer (type)", "Output Shape", "Param #"], cols))
        print_fn("=" * width)
        for i, layer in enumerate(self.layers):
            try:
                shape = str(layer.output_shape).replace("None", "None")
            except AttributeError:
                shape = "multiple"
            print_fn(_row([f"{layer.name} ({type(layer).__name__})", shape,
                           str(layer.count_params())], cols))
            print_fn(("=" if i == len(self.layers) - 1 else "_") * width)
        trainable = sum(K.count_params(w) for w in self.trainable_weights)
        total = sum(K.count_params(w) for w in self.weights)
        print_fn(f"Total params: {total:,}")
        print_fn(f"Trainable params: {trainable:,}")
        print_fn(f"Non-trainable params: {total - trainable:,}")
        print_fn("_" * width)

    def get_weights(self) -> list:
        return K.batch_get_value(self.weights)

    def set_weights(self, weights) -> None:
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on model {self.name} with a "
                             f"weight list of length {len(weights)}, but the model was "
                             f"expecting {len(params)} weights.")
        K.batch_set_value(list(zip(params, weights)))


def _row(fields, positions) -> str:
    line = ""
    for i, field in enumerate(fields):
        line = (line + field)[:positions[i]]
        line += " " * (positions[i] - len(line))
    return line
