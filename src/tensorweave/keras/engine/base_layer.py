"""`tf.keras.layers.Layer` in graph mode, on the project's `tf.layers.Layer`.

What Keras adds to a TF1 layer:
- names: `dense`, `dense_1`, ... per graph (Keras's counters, zero-based suffixes); the layer's
  variable scope is its name, so variables are `dense/kernel`, `dense_1/bias` as TF 1.15's
  Keras names them;
- `input_shape=`/`input_dim=`/`batch_input_shape=`/`batch_size=` for a model's first layer;
- the learning phase: a layer whose `call` takes `training` and is called without it gets
  `backend.learning_phase()`;
- masks: a layer's `compute_mask(inputs, mask)` gives its output's mask (Embedding with
  `mask_zero`, Masking); a layer whose `call` takes `mask` receives its input's mask (the
  recurrent layers skip masked steps); layers that `supports_masking` pass it on;
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
_MASKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()     # tensor → its Keras mask


def mask_of(tensor):
    """The Keras mask of `tensor` (a bool tensor over its leading axes), or None."""
    return _MASKS.get(tensor) if isinstance(tensor, Tensor) else None


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
    `add_weight`), `call(inputs, **kwargs)` and, optionally, `compute_output_shape`,
    `compute_mask` and `get_config`."""

    _supports_masking = False   # pass an input's mask on unchanged

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
        params = inspect.signature(self.call).parameters
        self._expects_training_arg = "training" in params
        self._expects_mask_arg = "mask" in params
        self.inbound_nodes: list[Node] = []
        self.supports_masking = type(self)._supports_masking

    def _init_set_name(self, name) -> None:
        base = to_snake_case(type(self).__name__)
        self._base_name = name or base
        self._name = name or K.unique_object_name(base)

    def _set_scope(self, scope=None) -> None:
        # NOTE: a name whose scope exists already (a model loaded into the graph it was saved
        # from) gets `dense_1_1/kernel`, as TF 1.x Keras's variables are uniquified
        if self._scope is None:
            with vs.variable_scope(scope, default_name=self._name) as captured:
                self._scope = captured

    def __call__(self, inputs, *args, **kwargs):
        if self._expects_training_arg and kwargs.get("training") is None:
            kwargs["training"] = K.learning_phase()
        mask = kwargs.pop("mask", None)
        if mask is None:
            masks = [mask_of(t) for t in to_list(inputs)]
            mask = masks[0] if len(masks) == 1 else (masks if any(
                m is not None for m in masks) else None)
        if self._expects_mask_arg and mask is not None:
            kwargs["mask"] = mask
        outputs = super().__call__(inputs, *args, **kwargs)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None
        out_mask = self.compute_mask(inputs, mask)
        if out_mask is not None:
            for t in to_list(outputs):
                if isinstance(t, Tensor):
                    _MASKS[t] = out_mask
        self._record(inputs, outputs, {k: v for k, v in kwargs.items() if k != "mask"})
        return outputs

    def compute_mask(self, inputs, mask=None):
        """The output's mask: the input's where the layer `supports_masking`, else None."""
        return mask if self.supports_masking else None

    def _record(self, inputs, outputs, kwargs) -> None:
        node = Node(self, to_list(inputs), to_list(outputs),
                    {k: v for k, v in kwargs.items() if k != "training"})
        self.inbound_nodes.append(node)
        for i, t in enumerate(node.outputs):
            if isinstance(t, Tensor):
                _PRODUCER[t] = (node, i)

    def add_weight(self, name=None, shape=None, dtype=None, initializer=None,
                   regularizer=None, trainable=None, constraint=None, **kwargs):
        """A weight of this layer; initializer, regularizer and constraint by Keras name
        ("uniform", "l2", "max_norm", ...) or object; `shape` a list or TensorShape."""
        from tensorweave.keras import constraints, initializers, regularizers

        if hasattr(shape, "as_list"):
            shape = shape.as_list()
        return super().add_weight(name, shape, dtype=dtype,
                                  initializer=initializers.get(initializer),
                                  regularizer=regularizers.get(regularizer),
                                  trainable=trainable,
                                  constraint=constraints.get(constraint), **kwargs)

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
