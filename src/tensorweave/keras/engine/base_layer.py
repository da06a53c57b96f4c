"""`tf.keras.layers.Layer` in graph mode, on the project's `tf.layers.Layer`.

What Keras adds to a TF1 layer:
- names: `dense`, `dense_1`, ... per graph (Keras's counters, zero-based suffixes); the layer's
  variable scope is its name, so variables are `dense/kernel`, `dense_1/bias` as TF 1.15's
  Keras names them;
- `input_shape=`/`input_dim=`/`batch_input_shape=`/`batch_size=` for a model's first layer;
- the learning phase: a layer whose `call` takes `training` and is called without it gets
  `backend.learning_phase()`;
- the functional graph: every call records (layer, inputs, outputs) as a node, so a `Model`
  can find its layers from its inputs and outputs and apply them again to new tensors;
- `get_config`/`from_config`, `get_weights`/`set_weights` (through the Keras session).
"""

from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass

from tensorweave.framework.operation import Tensor
from tensorweave.keras import backend as K
from tensorweave.ops import variable_scope as vs
from tensorweave.training.layers import base as tf_base
from tensorweave.training.layers.utils import to_snake_case


@dataclass
class Node:
    """One call of a layer: its input and output tensors (lists) and the call's kwargs."""

    layer: Layer
    inputs: list
    outputs: list
    kwargs: dict


_PRODUCER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tensor → (node, index)


def producer(tensor):
    """(node, output index) of the layer call that produced `tensor`, or None."""
    return _PRODUCER.get(tensor)


def to_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _serializable(value):
    if callable(value) and not isinstance(value, type):
        name = getattr(value, "__name__", None)
        if name is not None:
            return name
        return {"class_name": type(value).__name__,
                "config": dict(getattr(value, "get_config", dict)())}
    if isinstance(value, tuple):
        return list(value)
    return value


def keras_layer(cls):
    """Class decorator: records the arguments each `__init__` got, for `get_config`."""
    init = cls.__init__
    signature = inspect.signature(init)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        recorded = {k: v for k, v in list(bound.arguments.items())[1:]
                    if signature.parameters[k].kind not in (inspect.Parameter.VAR_KEYWORD,
                                                            inspect.Parameter.VAR_POSITIONAL)}
        if type(self) is cls:
            self._init_config = {k: _serializable(v) for k, v in recorded.items()}
        init(self, *args, **kwargs)

    __init__.__wrapped__ = init
    __init__.__doc__ = init.__doc__
    cls.__init__ = __init__
    return cls


class Layer(tf_base.Layer):
    """Base of the Keras layers: subclasses implement `build(input_shape)` (weights through
    `add_weight`), `call(inputs, **kwargs)` and, optionally, `compute_output_shape` and
    `get_config`."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        batch_size = kwargs.pop("batch_size", None)
        input_shape = kwargs.pop("input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        self._initial_weights = kwargs.pop("weights", None)
        kwargs.pop("dynamic", None)
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size, *tuple(input_shape))
        self._batch_input_shape = None if batch_input_shape is None else tuple(batch_input_shape)
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._expects_training_arg = "training" in inspect.signature(self.call).parameters
        self.inbound_nodes: list[Node] = []
        self.supports_masking = False

    def _init_set_name(self, name) -> None:
        base = to_snake_case(type(self).__name__)
        self._base_name = name or base
        self._name = name or K.unique_object_name(base)

    def _set_scope(self, scope=None) -> None:
        if self._scope is None:
            with vs.variable_scope(scope if scope is not None else self._name) as captured:
                self._scope = captured

    def __call__(self, inputs, *args, **kwargs):
        if self._expects_training_arg and kwargs.get("training") is None:
            kwargs["training"] = K.learning_phase()
        kwargs.pop("mask", None)
        outputs = super().__call__(inputs, *args, **kwargs)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None
        self._record(inputs, outputs, kwargs)
        return outputs

    def _record(self, inputs, outputs, kwargs) -> None:
        node = Node(self, to_list(inputs), to_list(outputs),
                    {k: v for k, v in kwargs.items() if k != "training"})
        self.inbound_nodes.append(node)
        for i, t in enumerate(node.outputs):
            if isinstance(t, Tensor):
                _PRODUCER[t] = (node, i)

    # -- Keras API --------------------------------------------------------------------------------
    @property
    def input(self):
        return self._only_node("input").inputs[0] if len(self._only_node("input").inputs) == 1 \
            else self._only_node("input").inputs

    @property
    def output(self):
        outs = self._only_node("output").outputs
        return outs[0] if len(outs) == 1 else outs

    @property
    def input_shape(self):
        shapes = [K.int_shape(t) for t in self._only_node("input").inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [K.int_shape(t) for t in self._only_node("output").outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    def _only_node(self, what: str) -> Node:
        if not self.inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no {what} to return.")
        return self.inbound_nodes[0]

    def get_weights(self) -> list:
        return K.batch_get_value(self.weights)

    def set_weights(self, weights) -> None:
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f'You called `set_weights(weights)` on layer "{self.name}" with a '
                             f"weight list of length {len(weights)}, but the layer was "
                             f"expecting {len(params)} weights.")
        for p, w in zip(params, weights):
            if tuple(p.shape.as_list()) != tuple(getattr(w, "shape", ())):
                raise ValueError(f"Layer weight shape {tuple(p.shape.as_list())} not "
                                 f"compatible with provided weight shape {w.shape}")
        K.batch_set_value(list(zip(params, weights)))

    def get_config(self) -> dict:
        config = {**getattr(self, "_init_config", {}), "name": self.name,
                  "trainable": self.trainable,
                  "dtype": self.dtype.name if self.dtype is not None else K.floatx()}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    def count_params(self) -> int:
        return int(sum(K.count_params(w) for w in self.weights))
