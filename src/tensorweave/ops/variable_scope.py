"""Variable scopes and `get_variable` (TF1's variable sharing), and the global step.

Each graph holds one `_VariableStore` (variables by full name) and one `_VariableScopeStore`
(the current `VariableScope` and how often each scope name was opened), kept in collections
as TensorFlow keeps them. `variable_scope` also opens a name scope: re-entering a scope
reuses its variable names (`foo/v`) while its ops get a fresh name scope (`foo_1/`).
"""

from __future__ import annotations

import contextlib
import copy
import enum
import functools
import inspect
import threading

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops
from tensorweave.ops import partitioned_variables as pv
from tensorweave.ops.partitioned_variables import PartitionedVariable
from tensorweave.ops.variables import Variable
from tensorweave.shapes import TensorShape


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""`reuse=AUTO_REUSE`: get_variable creates a variable if it does not exist, else returns it."""

_VARSTORE_KEY = ("__variable_store",)
_VARSCOPESTORE_KEY = ("__varscope",)


# -- the variable store ----------------------------------------------------------------------
class _VariableStore:
    """Variables created by `get_variable`, by full name."""

    def __init__(self):
        self._vars: dict[str, Variable] = {}
        self._partitioned_vars: dict[str, PartitionedVariable] = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None, **_unused):
        """The variable `name`, created or reused per `reuse`; `custom_getter` may wrap it.

        Raises:
          ValueError: see `_get_single_variable` and `_get_partitioned_variable`.
        """
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        dtype = getattr(dtype, "base_dtype", dtype)
        trainable = True if trainable is None else trainable
        kwargs = dict(name=name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, reuse=reuse, trainable=trainable,
                      collections=collections, caching_device=caching_device,
                      partitioner=partitioner, validate_shape=validate_shape,
                      use_resource=use_resource)
        if custom_getter is None:
            return self._true_getter(constraint=constraint, **kwargs)
        if _accepts(custom_getter, "constraint"):
            kwargs["constraint"] = constraint
        return custom_getter(getter=self._true_getter, **kwargs)

    def _true_getter(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, constraint=None, **_unused):
        is_scalar = isinstance(shape, (list, tuple)) and not shape
        if partitioner is not None and not is_scalar:
            if not callable(partitioner):
                raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
            return self._get_partitioned_variable(
                name, partitioner, shape, dtype, initializer, regularizer, reuse,
                True if trainable is None else trainable, collections, caching_device,
                validate_shape, constraint)
        if f"{name}/part_0" in self._vars:
            raise ValueError(f"No partitioner was provided, but a partitioned version of the "
                             f"variable was found: {name}/part_0. Perhaps a variable of the "
                             "same name was already created with partitioning?")
        return self._get_single_variable(
            name, shape, dtype, initializer, regularizer, reuse,
            True if trainable is None else trainable, collections, caching_device,
            validate_shape, constraint)

    def _get_partitioned_variable(self, name, partitioner, shape, dtype, initializer,
                                  regularizer, reuse, trainable, collections, caching_device,
                                  validate_shape, constraint) -> PartitionedVariable:
        """The PartitionedVariable `name` (parts `name/part_i`), created or reused.

        Raises:
          ValueError: an unknown shape; invalid partitions; an unpartitioned variable of that
            name; reuse disagreeing with existence; a shape or partitioning that differs.
        """
        dtype = dtypes.as_dtype(dtype)
        name = name[:-1] if name.endswith("/") else name  # get_variable("") in a scope
        from_value = initializer is not None and not callable(initializer)
        if from_value and shape is None:
            initializer = convert_to_tensor(
                initializer, dtype=None if isinstance(initializer, Tensor) else dtype)
            shape, dtype = initializer.shape, initializer.dtype.base_dtype
        shape = TensorShape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"Shape of a new partitioned variable ({name}) must be fully "
                             f"defined, but instead was {shape}.")
        if name in self._vars:
            raise ValueError(f"A partitioner was provided, but an unpartitioned version of "
                             f"the variable was found: {name}. Perhaps a variable of the same "
                             "name was already created without partitioning?")
        partitions = list(partitioner(shape=shape, dtype=dtype))
        axis = pv.check_partitions(name, shape, partitions)
        if name in self._partitioned_vars:
            return self._existing_partitioned(name, shape, dtype, partitions, reuse)
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created "
                             "with tf.get_variable(). Did you mean to set reuse=None in "
                             "VarScope?")
        parts = []
        for i, (offset, part_shape) in enumerate(
                pv.iter_slices(shape.as_list(), partitions[axis], axis)):
            part = self._new_part(f"{name}/part_{i}", shape, offset, part_shape, dtype,
                                  initializer, from_value, regularizer, trainable,
                                  collections, caching_device, validate_shape, constraint)
            part._set_save_slice_info(pv.SaveSliceInfo(name, shape.as_list(), offset,
                                                       part_shape))
            parts.append(part)
        result = pv.PartitionedVariable(name, shape, dtype, parts, partitions)
        self._partitioned_vars[name] = result
        return result

    def _new_part(self, part_name, full_shape, offset, part_shape, dtype, initializer,
                  from_value, regularizer, trainable, collections, caching_device,
                  validate_shape, constraint) -> Variable:
        graph = get_default_graph()
        with graph.name_scope(f"{part_name}/PartitionedInitializer/"):
            if from_value:
                init, init_shape = pv.slice_initial_value(initializer, offset, part_shape), None
            else:
                init = initializer or _default_initializer(part_name, dtype)
                init, init_shape = _with_partition_info(
                    init, pv.PartitionInfo(full_shape.as_list(), offset)), part_shape
        with graph.name_scope(None):
            return self._get_single_variable(
                part_name, init_shape, dtype, init, regularizer, False, trainable,
                collections, caching_device, validate_shape, constraint)

    def _existing_partitioned(self, name, shape, dtype, partitions, reuse):
        var = self._partitioned_vars[name]
        if reuse is False:
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you "
                             "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if not shape.is_compatible_with(var.get_shape()):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                             f"shape {shape} and found shape {var.get_shape()}.")
        if not dtype.is_compatible_with(var.dtype):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                             f"dtype {dtype.name} and found dtype {var.dtype.name}.")
        if partitions != var._get_partitions():
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                             f"partitions {partitions} and found partitions "
                             f"{var._get_partitions()}.")
        return var

    def _get_single_variable(self, name, shape, dtype, initializer, regularizer, reuse,
                             trainable, collections, caching_device, validate_shape,
                             constraint):
        """Returns the existing variable (checked) or creates one.

        Raises:
          ValueError: it exists and reuse is False; it does not exist and reuse is True; a
            shape or dtype differs from the existing one; a constant initializer with a shape.
        """
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        shape = TensorShape(shape)
        if name in self._vars:
            return self._existing(name, shape, dtype, reuse)
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?")
        if initializer is None:
            initializer, from_value = _default_initializer(name, dtype), False
        init_val, var_dtype = _init_value(initializer, from_value, shape, dtype)
        v = Variable(initial_value=init_val, name=name, trainable=trainable,
                     collections=collections, caching_device=caching_device, dtype=var_dtype,
                     validate_shape=validate_shape, constraint=constraint)
        self._vars[name] = v
        if regularizer:
            _regularize(v, name, regularizer)
        return v

    def _existing(self, name, shape, dtype, reuse) -> Variable:
        var = self._vars[name]
        if reuse is False:
            raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set "
                             f"reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally "
                             f"defined at:\n\n{_format_site(var.op.traceback)}")
        if not shape.is_compatible_with(var.get_shape()):
            raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                             f"and found shape {var.get_shape()}.")
        if not dtype.is_compatible_with(var.dtype.base_dtype):
            raise ValueError(f"Trying to share variable {name}, but specified dtype "
                             f"{dtype.name} and found dtype {var.dtype.name}.")
        return var


def _format_site(frames) -> str:
    return "".join(f'  File "{f[0]}", line {f[1]}, in {f[2]}\n' for f in frames[::-1][:5])


def _accepts(fn, arg: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return arg in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def _default_initializer(name, dtype: dtypes.DType):
    """glorot_uniform for floating dtypes, zeros for integers, bools and strings."""
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool or dtype == dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype} is required")


def _with_partition_info(initializer, info):
    """`initializer` called with `partition_info=info` (the part's place in the variable)."""
    if inspect.isclass(initializer):
        initializer = initializer()

    def init(shape, dtype=None, partition_info=None):
        return initializer(shape, dtype=dtype, partition_info=info)
    return init


def _init_value(initializer, from_value: bool, shape: TensorShape, dtype):
    """(initial value or callable, dtype for Variable) for an initializer or a value."""
    if from_value:
        return initializer, None
    if inspect.isclass(initializer):
        initializer = initializer()
    if shape.is_fully_defined():
        return (lambda: initializer(shape.as_list(), dtype=dtype, partition_info=None),
                dtype.base_dtype)
    if _takes_no_args(initializer):
        return initializer, None
    raise ValueError("The initializer passed is not valid. It should be a callable with no "
                     "arguments and the shape should not be provided or an instance of "
                     "`tf.keras.initializers.*' and `shape` should be fully defined.")


def _takes_no_args(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


def _regularize(v: Variable, name: str, regularizer) -> None:
    graph = get_default_graph()
    with graph.colocate_with(v.op), graph.name_scope(f"{name}/Regularizer/"), \
            graph.control_dependencies(None):
        loss = regularizer(v)
    if loss is not None:
        graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)


# -- scopes ----------------------------------------------------------------------------------
class VariableScope:
    """Defaults for `get_variable` inside a `variable_scope`: name prefix, reuse, initializer,
    regularizer, caching device, partitioner, custom getter, dtype and constraint."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None, name_scope="",
                 dtype=dtypes.float32, use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self) -> None:
        """From now on, get_variable in this scope reuses existing variables."""
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self._initializer = initializer

    def set_dtype(self, dtype) -> None:
        self._dtype = dtype

    def set_use_resource(self, use_resource) -> None:
        self._use_resource = use_resource

    def set_regularizer(self, regularizer) -> None:
        self._regularizer = regularizer

    def set_caching_device(self, caching_device) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        self._custom_getter = custom_getter

    def get_collection(self, name) -> list:
        scope = self._name + "/" if self._name else None
        return get_default_graph().get_collection(name, scope)

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None, **kwargs):
        """`var_store.get_variable` for `<scope name>/<name>` with this scope's defaults."""
        regularizer = self._regularizer if regularizer is None else regularizer
        caching_device = self._caching_device if caching_device is None else caching_device
        partitioner = self._partitioner if partitioner is None else partitioner
        custom_getter = self._custom_getter if custom_getter is None else custom_getter
        reuse = self._reuse if reuse is None else reuse
        use_resource = self._use_resource if use_resource is None else use_resource
        full_name = f"{self._name}/{name}" if self._name else name
        graph = get_default_graph()
        # NOTE: variable names follow the variable scope only, so the name scope is reset.
        with graph.name_scope(None):
            _check_initializer_dtype(initializer, dtype)
            return var_store.get_variable(
                full_name, shape=shape,
                dtype=self._dtype if dtype is None else dtype,
                initializer=self._initializer if initializer is None else initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape,
                use_resource=use_resource, custom_getter=custom_getter,
                constraint=self._constraint if constraint is None else constraint, **kwargs)


def _check_initializer_dtype(initializer, dtype) -> None:
    if dtype is not None and initializer is not None and not callable(initializer):
        init_dtype = convert_to_tensor(initializer).dtype.base_dtype
        if init_dtype != dtypes.as_dtype(dtype):
            raise ValueError(f"Initializer type '{init_dtype!r}' and explicit dtype "
                             f"'{dtypes.as_dtype(dtype)!r}' don't match.")


class _VariableScopeStore(threading.local):
    """The current scope and the open count of each scope name (per graph, per thread)."""

    def __init__(self):
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict[str, int] = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name) -> None:
        for k in list(self.variable_scopes_count):
            if scope_name is None or k.startswith(scope_name + "/"):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def _store_in_collection(key, factory):
    graph = get_default_graph()
    found = graph.get_collection(key)
    if found:
        return found[0]
    store = factory()
    graph.add_to_collection(key, store)
    return store


def get_variable_scope_store() -> _VariableScopeStore:
    return _store_in_collection(_VARSCOPESTORE_KEY, _VariableScopeStore)


def _get_default_variable_store() -> _VariableStore:
    return _store_in_collection(_VARSTORE_KEY, _VariableStore)


def stored_variables() -> dict[str, Variable]:
    """The variables `get_variable` created in the default graph, by full name (the parts
    of a partitioned variable as `name/part_i`)."""
    return dict(_get_default_variable_store()._vars)


def stored_partitioned_variables() -> dict[str, PartitionedVariable]:
    """The partitioned variables `get_variable` created in the default graph, by name."""
    return dict(_get_default_variable_store()._partitioned_vars)


def get_variable_scope() -> VariableScope:
    """The current variable scope."""
    return get_variable_scope_store().current_scope


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    if old_getter is None:
        return custom_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped


_SETTERS = ("initializer", "regularizer", "caching_device", "partitioner", "dtype",
            "use_resource")


class _PureVariableScope:
    """Switches the current VariableScope (no name scope): to a copy of a given scope, or to
    `<current>/<name>` inheriting the current scope's defaults."""

    def __init__(self, name_or_scope, reuse=None, old_name_scope=None, custom_getter=None,
                 constraint=None, **overrides):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._old_name_scope = old_name_scope
        self._custom_getter = custom_getter
        self._constraint = constraint
        self._overrides = overrides
        self._store = get_variable_scope_store()
        self._entered = None

    def __enter__(self) -> VariableScope:
        self._old = self._store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            self._new_name = self._name_or_scope.name
            self._store.open_variable_scope(self._new_name)
            self._old_subscopes = copy.copy(self._store.variable_scopes_count)
            scope = self._copy_of(self._name_or_scope)
        else:
            old = self._old
            self._new_name = f"{old.name}/{self._name_or_scope}" if old.name \
                else self._name_or_scope
            self._reuse = self._reuse or old.reuse
            scope = self._child_of(old)
            self._store.open_variable_scope(self._new_name)
        self._store.current_scope = self._entered = scope
        return scope

    def _copy_of(self, src: VariableScope) -> VariableScope:
        scope = VariableScope(
            src.reuse if not self._reuse else self._reuse, name=self._new_name,
            initializer=src.initializer, regularizer=src.regularizer,
            caching_device=src.caching_device, partitioner=src.partitioner, dtype=src.dtype,
            custom_getter=src.custom_getter, name_scope=src.original_name_scope,
            use_resource=src.use_resource, constraint=self._constraint)
        self._apply_overrides(scope, src.custom_getter)
        return scope

    def _child_of(self, old: VariableScope) -> VariableScope:
        name_scope = self._name_or_scope if self._old_name_scope is None \
            else self._old_name_scope
        scope = VariableScope(
            self._reuse, name=self._new_name, initializer=old.initializer,
            regularizer=old.regularizer, caching_device=old.caching_device,
            partitioner=old.partitioner, dtype=old.dtype, use_resource=old.use_resource,
            custom_getter=old.custom_getter, name_scope=name_scope,
            constraint=self._constraint)
        self._apply_overrides(scope, old.custom_getter)
        return scope

    def _apply_overrides(self, scope: VariableScope, old_getter) -> None:
        for key in _SETTERS:
            value = self._overrides.get(key)
            if value is not None:
                getattr(scope, f"set_{key}")(value)
        if self._custom_getter is not None:
            scope.set_custom_getter(_maybe_wrap_custom_getter(self._custom_getter, old_getter))

    def __exit__(self, *exc) -> None:
        if self._store.current_scope is not self._entered:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            self._store.variable_scopes_count = self._old_subscopes
        else:
            self._store.close_variable_subscopes(self._new_name)
        self._store.current_scope = self._old


def _get_unique_variable_scope(prefix: str) -> str:
    store = get_variable_scope_store()
    current = get_variable_scope()
    name = f"{current.name}/{prefix}" if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


class variable_scope:  # noqa: N801 - TF's name
    """TF1 `tf.variable_scope`: a context manager for variable names and `get_variable`
    defaults, which also opens a name scope.

    `with variable_scope("foo"):` prefixes variables with `foo/` (re-entering the name or the
    scope object reuses the prefix; its name scope becomes `foo_1/`). With `name_or_scope=None`,
    `default_name` is made unique (`dense`, `dense_1`). `reuse` is True, AUTO_REUSE or None
    (inherit; False means None). Yields the `VariableScope`.

    Raises:
      TypeError: neither name_or_scope nor default_name; a bad name_or_scope type.
      ValueError: a bad `reuse`; reuse=True with default_name only.
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                 reuse=None, dtype=None, use_resource=None, constraint=None,
                 auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None  # NOTE: scopes cannot stop inheriting reuse; False means None
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError("The auxiliary_name_scope must be `True` or `False`, while get "
                            f"{auxiliary_name_scope}")
        if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values or []
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope
        self._custom_getter = custom_getter
        self._constraint = constraint
        self._overrides = dict(initializer=initializer, regularizer=regularizer,
                               caching_device=caching_device, partitioner=partitioner,
                               dtype=dtype, use_resource=use_resource)
        self._graph = _graph_of(self._values) or get_default_graph()
        self._stack = None

    def __enter__(self) -> VariableScope:
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(self._graph.as_default())
            scope = self._enter(stack)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return scope

    def _enter(self, stack: contextlib.ExitStack) -> VariableScope:
        name_scope = None
        if not self._auxiliary_name_scope:
            current = self._graph.get_name_scope()
            name_scope = self._graph.name_scope(current + "/" if current else "")
        if self._name_or_scope is None:
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            ns_name = stack.enter_context(name_scope or self._graph.name_scope(
                self._default_name))
            pure = self._pure(_get_unique_variable_scope(self._default_name), ns_name)
            return stack.enter_context(pure)
        if isinstance(self._name_or_scope, str):
            short = self._name_or_scope
        else:
            short = self._name_or_scope.name.split("/")[-1]
        if not (short or name_scope):
            return stack.enter_context(self._pure(self._name_or_scope, None))
        ns_name = stack.enter_context(name_scope or self._graph.name_scope(short))
        old = ns_name if isinstance(self._name_or_scope, str) \
            else self._name_or_scope.original_name_scope
        return stack.enter_context(self._pure(self._name_or_scope, old))

    def _pure(self, name_or_scope, old_name_scope) -> _PureVariableScope:
        return _PureVariableScope(name_or_scope, reuse=self._reuse,
                                  old_name_scope=old_name_scope,
                                  custom_getter=self._custom_getter,
                                  constraint=self._constraint, **self._overrides)

    def __exit__(self, *exc):
        stack, self._stack = self._stack, None
        return stack.__exit__(*exc)


def _graph_of(values):
    for v in values or ():
        g = getattr(v, "graph", None)
        if g is not None:
            return g
    return None


def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """Deprecated: `variable_scope(name_or_scope, default_name, values, ...)`."""
    return variable_scope(name_or_scope, default_name=default_name, values=values,
                          initializer=initializer, regularizer=regularizer,
                          caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                          use_resource=use_resource, constraint=constraint)


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """TF1 `tf.get_variable`: the variable `<scope>/<name>`, created (initialized by
    `initializer`, default glorot_uniform for floats and zeros otherwise) or reused per the
    scope's `reuse`.

    Raises:
      ValueError: "Variable foo/v already exists, disallowed..." (reuse False), "Variable
        foo/v does not exist..." (reuse True), or a shape/dtype differing from the existing
        variable's.
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype,
        initializer=initializer, regularizer=regularizer, trainable=trainable,
        collections=collections, caching_device=caching_device, partitioner=partitioner,
        validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, caching_device=None,
                       partitioner=None, validate_shape=True, use_resource=None,
                       custom_getter=None, constraint=None):
    """`get_variable` for a non-trainable variable in LOCAL_VARIABLES."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, trainable=False, collections=collections,
                        caching_device=caching_device, partitioner=partitioner,
                        validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint)


def no_regularizer(_):
    """Use this function to prevent regularization of variables."""
    return None


# -- the global step (TF's training_util) ----------------------------------------------------
def get_global_step(graph=None):
    """The global step variable (GLOBAL_STEP collection, else `global_step:0`), or None.

    Raises:
      TypeError: it is not an integer scalar Variable or Tensor.
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        return None
    if found:
        step = found[0]
    else:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    assert_global_step(step)
    return step


def assert_global_step(global_step_tensor) -> None:
    """Raises TypeError unless `global_step_tensor` is an integer scalar Variable/Tensor."""
    from tensorweave.framework.operation import Tensor

    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: '
                        f"{global_step_tensor}.")
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: '
                        f"{global_step_tensor.dtype}")
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def create_global_step(graph=None):
    """Creates the int64 scalar variable `global_step` (in GLOBAL_VARIABLES and GLOBAL_STEP).

    Raises:
      ValueError: a global step already exists.
    """
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64,
                            initializer=init_ops.zeros_initializer(), trainable=False,
                            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The global step, created first when the graph has none."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess, global_step_tensor) -> int:
    """The global step's value in `sess`, as a Python int."""
    return int(sess.run(global_step_tensor))


__all__ = [
    "variable_scope", "variable_op_scope", "get_variable", "get_local_variable",
    "get_variable_scope", "VariableScope", "AUTO_REUSE", "no_regularizer",
    "get_global_step", "create_global_step", "get_or_create_global_step", "global_step",
    "assert_global_step",
]
