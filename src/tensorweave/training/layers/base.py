"""`tf.layers.Layer`: TF1's layer base class, with TF1's variable naming and sharing.

A layer owns one variable scope, chosen the first time it is called (or at construction when
given `_scope`, as the functional `tf.layers.dense(..., name=...)` does):

- unnamed layers get a unique scope from their class name: `dense`, `dense_1`, ...; a named
  functional layer uses its name as is, so calling `dense(x, 3, name="fc")` twice raises
  "Variable fc/kernel already exists" unless `reuse=True`;
- variables are `<scope>/<weight name>` (`dense/kernel`, `batch_normalization/moving_mean`),
  created through `tf.get_variable`, so `variable_scope` initializers, regularizers and
  custom getters apply;
- ops go to the scope's original name scope (`dense/MatMul`); calling the same layer object
  again reuses its variables and adds `dense/MatMul_1`.

Regularizer results (`<scope>/<weight>/Regularizer/...`) go to REGULARIZATION_LOSSES; update
ops (batch norm's moving averages) go to UPDATE_OPS after each call, as in TF1.
"""

from __future__ import annotations

import inspect
import weakref

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, get_collection_ref, get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import variable_scope as vs
from tensorweave.training.layers.utils import assert_input_compatibility, to_snake_case

_NAME_UIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _unique_layer_name(base_name: str) -> str:
    """`dense_1`, `dense_2`, ... per graph (Keras' `unique_object_name`, one-based)."""
    uids = _NAME_UIDS.setdefault(get_default_graph(), {})
    uids[base_name] = uids.get(base_name, 0) + 1
    return f"{base_name}_{uids[base_name]}"


def add_elements_to_collection(elements, collection_name: str) -> None:
    """Appends each element not yet in the collection (by identity)."""
    collection = get_collection_ref(collection_name)
    present = {id(e) for e in collection}
    for element in elements:
        if id(element) not in present:
            collection.append(element)
            present.add(id(element))


class Layer:
    """Base class of the `tf.layers` layers: subclasses implement `build(input_shape)` (create
    weights with `add_weight`) and `call(inputs, ...)`; `layer(inputs)` / `layer.apply(inputs)`
    builds once and calls.

    Attributes:
      name: the layer's name (`dense_1` when not given; the scope name is `scope_name`).
      trainable: whether new weights go to TRAINABLE_VARIABLES and updates to UPDATE_OPS.
      variables, trainable_variables, non_trainable_variables, weights, updates, losses.
    """

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        self._activity_regularizer = kwargs.pop("activity_regularizer", None)
        kwargs.pop("autocast", None)
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {sorted(kwargs)[0]}")
        self._trainable = bool(trainable)
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype).base_dtype
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._updates: list = []
        self._losses: list = []
        self.built = False
        self.input_spec = None
        self._init_set_name(name)
        self._call_has_scope_arg = "scope" in inspect.signature(self.call).parameters
        self._scope = None
        if scope:
            with vs.variable_scope(scope) as captured:
                self._scope = captured
        self._current_scope = None

    def _init_set_name(self, name) -> None:
        if isinstance(name, vs.VariableScope):
            self._base_name = name.name
            self._name = _unique_layer_name(to_snake_case(type(self).__name__))
        elif name:
            self._base_name = self._name = name
        else:
            self._base_name = to_snake_case(type(self).__name__)
            self._name = _unique_layer_name(self._base_name)

    # -- properties -------------------------------------------------------------------------
    name = property(lambda self: self._name)

    @property
    def dtype(self):
        return self._dtype

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value) -> None:
        self._trainable = bool(value)

    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    @property
    def scope_name(self) -> str:
        """The layer's variable scope name (`dense_1`).

        Raises:
          ValueError: the layer has not been called yet.
        """
        if not self._scope:
            raise ValueError(f'No name available for layer scope because the layer '
                             f'"{self._name}" has not been used yet. The scope name is '
                             "determined the first time the layer instance is called. You must "
                             "therefore call the layer before querying `scope_name`.")
        return self._scope.name

    @property
    def trainable_weights(self) -> list:
        return list(self._trainable_weights) if self._trainable else []

    @property
    def non_trainable_weights(self) -> list:
        if self._trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self) -> list:
        """Trainable weights, then non-trainable ones, in creation order."""
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def updates(self) -> list:
        """The update ops (moving averages) of all calls; none for a non-trainable layer."""
        return list(self._updates) if self._trainable else []

    @property
    def losses(self) -> list:
        """Regularization and activity losses created by this layer."""
        return list(self._losses)

    def count_params(self) -> int:
        """The number of scalars in the layer's weights.

        Raises:
          ValueError: the layer is not built yet.
        """
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer {self.name}, but the "
                             "layer isn't built. You can build it manually via: "
                             f"`{self.name}.build(batch_input_shape)`.")
        return sum(w.shape.num_elements() for w in self.weights)

    # -- to override ------------------------------------------------------------------------
    def build(self, input_shape) -> None:
        """Creates the layer's weights for inputs of `input_shape` (TensorShape)."""
        self.built = True

    def call(self, inputs, **kwargs):
        """The layer's computation; the default returns `inputs`."""
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError(f"{type(self).__name__}.compute_output_shape")

    # -- weights, losses, updates -----------------------------------------------------------
    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=None, constraint=None, use_resource=None, synchronization=None,
                   aggregation=None, partitioner=None, getter=None, **kwargs):
        """Creates (or, when reusing, gets) the variable `<layer scope>/<name>` via
        `tf.get_variable`, regularized under `<scope>/<name>/Regularizer/` when new.

        Raises:
          TypeError: an unknown keyword argument.
          ValueError: from `get_variable` (exists without reuse, shape mismatch, ...).
        """
        for kwarg in kwargs:
            if kwarg != "experimental_autocast":
                raise TypeError("Unknown keyword argument:", kwarg)
        trainable = True if trainable is None else bool(trainable)
        existing = {id(v) for v in get_collection_ref(GraphKeys.GLOBAL_VARIABLES)}
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        self._set_scope(None)
        graph = get_default_graph()
        with vs.variable_scope(self._scope, reuse=self.built or self._reuse,
                               auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with graph.name_scope(self._name_scope()):
                if initializer is None:
                    initializer = scope.initializer
                variable = (getter or vs.get_variable)(
                    name, shape=shape, dtype=dtype, initializer=initializer,
                    trainable=trainable and self._trainable, constraint=constraint,
                    partitioner=partitioner, use_resource=use_resource)
                if regularizer and id(variable) not in existing:
                    self._handle_weight_regularization(name, variable, regularizer)
        self._track_weight(variable, trainable)
        return variable

    def _track_weight(self, variable, trainable: bool) -> None:
        in_trainable = any(v is variable
                           for v in get_collection_ref(GraphKeys.TRAINABLE_VARIABLES))
        if trainable and self._trainable and in_trainable:
            self._trainable_weights.append(variable)
        else:  # NOTE: also when a custom getter overrode `trainable`, as TF1 handles it
            self._non_trainable_weights.append(variable)

    def _handle_weight_regularization(self, name: str, variable, regularizer) -> None:
        with get_default_graph().name_scope(name + "/Regularizer"):
            loss = regularizer(variable)
        if loss is not None:
            self.add_loss(loss)

    def add_loss(self, losses, inputs=None) -> None:
        """Records loss tensors (or zero-argument callables) and adds them to
        REGULARIZATION_LOSSES, as TF1 layers do."""
        new = []
        for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
            if callable(loss):
                loss = loss()
            if loss is None:
                continue
            if not isinstance(loss, Tensor):
                loss = convert_to_tensor(loss, dtype=dtypes.float32)
            new.append(loss)
        self._losses.extend(new)
        add_elements_to_collection(new, GraphKeys.REGULARIZATION_LOSSES)

    def add_update(self, updates, inputs=None) -> None:
        """Records update ops (callables are called now, as TF1 graph mode does); they go to
        UPDATE_OPS at the end of the call."""
        for update in updates if isinstance(updates, (list, tuple)) else [updates]:
            if callable(update):
                update = update()
            self._updates.append(update.op if isinstance(update, Tensor) else update)

    # -- scopes -----------------------------------------------------------------------------
    def _name_scope(self) -> str:
        return self._current_scope.original_name_scope

    def _set_scope(self, scope=None) -> None:
        if self._scope is not None:
            return
        if self._reuse:
            with vs.variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with vs.variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    # -- calling ----------------------------------------------------------------------------
    def apply(self, inputs, *args, **kwargs):
        """Same as `layer(inputs, ...)`."""
        return self(inputs, *args, **kwargs)

    def __call__(self, inputs, *args, **kwargs):
        """Builds the layer on first use, then runs `call` in the layer's scopes.

        `scope=` (first call only) picks the variable scope. Returns `call`'s outputs.
        Raises:
          ValueError: inputs incompatible with the layer's input spec; `call` returned None.
        """
        scope = kwargs.pop("scope", None)
        inputs = _convert_inputs(inputs)
        self._set_scope(scope)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse,
                               auxiliary_name_scope=False) as current:
            self._current_scope = current
            if self._call_has_scope_arg:
                kwargs["scope"] = current
            with get_default_graph().name_scope(self._name_scope()):
                outputs = self._build_and_call(inputs, args, kwargs)
        add_elements_to_collection(self.updates, GraphKeys.UPDATE_OPS)
        return outputs

    def _build_and_call(self, inputs, args, kwargs):
        first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
        if not self.built:
            if isinstance(first, Tensor):
                assert_input_compatibility(self.input_spec, first, self._name)
                if self._dtype is None:  # NOTE: TF1 layers take their inputs' dtype
                    self._dtype = first.dtype.base_dtype
            shapes = [t.shape for t in inputs] if isinstance(inputs, (list, tuple)) \
                else getattr(inputs, "shape", None)
            self.build(shapes)
            self.built = True
        elif isinstance(first, Tensor):
            assert_input_compatibility(self.input_spec, first, self._name)
        outputs = self.call(inputs, *args, **kwargs)
        if outputs is None:
            raise ValueError(f"A layer's `call` method should return a Tensor or a list of "
                             f"Tensors, not None (layer: {self._name}).")
        self._handle_activity_regularization(inputs, outputs)
        return outputs

    def _handle_activity_regularization(self, inputs, outputs) -> None:
        if not self._activity_regularizer:
            return
        from tensorweave.ops import array_ops, math_ops

        with get_default_graph().name_scope("ActivityRegularizer"):
            for output in outputs if isinstance(outputs, (list, tuple)) else [outputs]:
                loss = self._activity_regularizer(output)
                batch = math_ops.cast(array_ops.shape(output)[0], loss.dtype)
                self.add_loss(loss / batch, inputs=inputs)

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__} name={self._name!r}>"


def _convert_inputs(inputs):
    """Tensors stay; Variables, numpy arrays and Python values become tensors."""
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(_convert_inputs(x) for x in inputs)
    if isinstance(inputs, Tensor):
        return inputs
    return convert_to_tensor(inputs)


__all__ = ["Layer"]
