"""`tf.Variable` (TF1's RefVariable), variable collections and initializer ops.

A Variable is four ops, named as TensorFlow names them (checkpoints depend on it):
`<name>` (VariableV2), `<name>/initial_value` (or `<name>/Initializer/...` when the initial
value is a callable), `<name>/Assign` (the initializer) and `<name>/read` (the Identity every
reader uses). A Variable converts to `<name>/read` wherever a Tensor is expected, and to the
ref tensor `<name>:0` where an op wants a ref (Assign, ScatterAdd, ...).

NOTE: ops of other families (zeros, stack, group, ...) are reached through the public
namespace (`tf.zeros`), imported at call time.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import (
    GraphKeys,
    add_to_collections,
    get_collection,
    get_default_graph,
)
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorweave.ops import state_ops
from tensorweave.ops.array_ops import identity
from tensorweave.ops.partitioned_variables import SaveSliceInfo as _SaveSliceInfo
from tensorweave.ops.registry import op_traits
from tensorweave.shapes import TensorShape


class Variable:
    """A mutable tensor that keeps its value across `Session.run` calls (TF1 `tf.Variable`).

    Example:
        w = tf.Variable(tf.zeros([3, 2]), name="w")   # ops w, w/Assign, w/read, ...
        sess.run(w.initializer)
        sess.run(w.assign_add(tf.ones([3, 2])))

    Raises (constructor):
      ValueError: no initial value, an initial value of unknown shape with
        `validate_shape=True`, bad `collections` or a non-callable `constraint`.
    """

    __array_priority__ = 100
    SaveSliceInfo = _SaveSliceInfo  # where a part sits in its partitioned variable

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        # NOTE: use_resource is accepted for TF1 compatibility; every variable is a ref variable.
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        self._init_from_args(initial_value, True if trainable is None else bool(trainable),
                             collections, validate_shape, caching_device, name, dtype,
                             constraint, shape)

    # -- construction -----------------------------------------------------------------------
    def _init_from_args(self, initial_value, trainable, collections, validate_shape,
                        caching_device, name, dtype, constraint, shape) -> None:
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        collections = _collections_for(collections, trainable)
        from_fn = callable(initial_value)
        graph = get_default_graph()
        values = [] if from_fn else [initial_value]
        with graph.control_dependencies(None), \
                state_ops.op_name_scope(name, "Variable", values) as ns:
            first = graph.version
            self._initial_value = _initial_value_tensor(initial_value, from_fn, dtype)
            initializer_ops = graph.ops_since(first) if from_fn else []
            var_shape = _variable_shape(self._initial_value, validate_shape, shape)
            with ns.final() as var_name:
                self._variable = state_ops.variable_op_v2(
                    var_shape, self._initial_value.dtype.base_dtype, name=var_name)
            for op in initializer_ops:  # NOTE: TF's `_class` attr scope: placed with the
                # variable, unless an active colocate_with already decided (slots)
                op._attrs.setdefault("_class", [f"loc:@{self._variable.op.name}"])
            if validate_shape and not self._initial_value.shape.is_fully_defined():
                raise ValueError(f"initial_value must have a shape specified: "
                                 f"{self._initial_value}")
            self._initializer_op = state_ops.assign(
                self._variable, self._initial_value, validate_shape=validate_shape).op
            self._snapshot = _snapshot(graph, self._variable, caching_device)
        self._name = self._variable.name
        self._trainable = trainable
        self._caching_device = caching_device
        self._constraint = constraint
        self._save_slice_info = None
        add_to_collections(collections, self)

    def _init_from_proto(self, variable_def, import_scope=None) -> None:
        """Rebinds to ops already in the graph, named by a VariableDef (proto or look-alike)."""
        g = get_default_graph()

        def el(name):
            return g.as_graph_element(_prepend_scope(name, import_scope))

        self._variable = el(variable_def.variable_name)
        self._name = self._variable.name
        self._initializer_op = el(variable_def.initializer_name)
        init_name = getattr(variable_def, "initial_value_name", "")
        self._initial_value = el(init_name) if init_name else None
        self._snapshot = el(variable_def.snapshot_name)
        self._trainable = bool(getattr(variable_def, "trainable", True))
        self._caching_device = None
        self._constraint = None
        info = getattr(variable_def, "save_slice_info_def", None)
        self._save_slice_info = _SaveSliceInfo(save_slice_info_def=info,
                                               import_scope=import_scope) \
            if info is not None and info.full_name else None

    # -- identity ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def op(self):
        return self._variable.op

    @property
    def dtype(self) -> dtypes.DType:
        """The ref dtype (`float32_ref`), as TF1's ref variables report it."""
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    def set_shape(self, shape) -> None:
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def initializer(self):
        """The `Assign` op that sets the initial value."""
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def _shared_name(self) -> str:
        return self._name[:-2] if self._name.endswith(":0") else self._name

    def _ref(self) -> Tensor:
        """The ref tensor `<name>:0` (what Assign-family ops take)."""
        return self._variable

    def _as_graph_element(self) -> Tensor:
        return self._snapshot

    def _set_save_slice_info(self, save_slice_info) -> None:
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info

    def __repr__(self) -> str:
        return (f"<tf.Variable '{self._name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    # -- reading ----------------------------------------------------------------------------
    def value(self) -> Tensor:
        """The snapshot `<name>/read` that readers share."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new Identity op named `read` in the current scope, reading the variable."""
        return identity(self._variable, name="read")

    def eval(self, session=None):
        """The variable's value in `session` (or the default session)."""
        return self._variable.eval(session=session)

    def initialized_value(self) -> Tensor:
        """The value, or the initial value while the variable is still uninitialized."""
        from tensorweave.ops.control_flow_ops import cond

        with self.graph.control_dependencies(None):
            return cond(is_variable_initialized(self), self.read_value,
                        lambda: self._initial_value)

    def load(self, value, session=None) -> None:
        """Sets the value by running the initializer with `value` fed in."""
        from tensorweave.framework.default_session import get_default_session

        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    # -- writing ----------------------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        """An `Assign` op: the new value (`read_value=True`) or the op itself."""
        out = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def count_up_to(self, limit):
        return state_ops.count_up_to(self._variable, limit=limit)

    def _scatter(self, fn, sparse_delta, use_locking, name):
        return fn(self._variable, sparse_delta.indices, sparse_delta.values,
                  use_locking=use_locking, name=name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Updates rows `sparse_delta.indices` with `sparse_delta.values` (IndexedSlices)."""
        return self._scatter(state_ops.scatter_update, sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_add, sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_sub, sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(state_ops.scatter_mul, sparse_delta, use_locking, name)

    def scatter_nd_update(self, indices, updates, name=None):
        return state_ops.scatter_nd_update(self._variable, indices, updates, name=name)

    def scatter_nd_add(self, indices, updates, name=None):
        return state_ops.scatter_nd_add(self._variable, indices, updates, name=name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return state_ops.scatter_nd_sub(self._variable, indices, updates, name=name)

    # -- conversion -------------------------------------------------------------------------
    @staticmethod
    def _TensorConversionFunction(v, dtype=None, name=None, as_ref=False):  # noqa: N802
        """TF's conversion: the ref tensor when `as_ref`, else the `read` snapshot."""
        if dtype is not None and dtypes.as_dtype(dtype).base_dtype != v.dtype.base_dtype:
            raise ValueError(f"Incompatible type conversion requested to type "
                             f"'{dtypes.as_dtype(dtype).name}' for variable of type "
                             f"'{v.dtype.name}'")
        return v._ref() if as_ref else v.value()


VariableV1 = RefVariable = Variable

# Every Tensor operator reads the variable's snapshot, then acts as the Tensor's operator.
_OPERATORS = [
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__div__",
    "__rdiv__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
    "__rmod__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__", "__or__",
    "__ror__", "__xor__", "__rxor__", "__getitem__", "__pow__", "__rpow__", "__invert__",
    "__neg__", "__abs__", "__matmul__", "__rmatmul__",
]


def _delegate(operator: str):
    def run(self, *args, **kwargs):
        fn = getattr(Tensor, operator, None)
        if fn is None:
            return NotImplemented
        return fn(self.value(), *args, **kwargs)

    run.__name__ = operator
    return run


for _operator in _OPERATORS:
    setattr(Variable, _operator, _delegate(_operator))

register_tensor_conversion_function(Variable, Variable._TensorConversionFunction)


# -- construction helpers --------------------------------------------------------------------
def _collections_for(collections, trainable: bool) -> list:
    if collections is None:
        collections = [GraphKeys.GLOBAL_VARIABLES]
    if not isinstance(collections, (list, tuple, set)):
        raise ValueError(f"collections argument to Variable constructor must be a list, tuple, "
                         f"or set. Got {collections} of type {type(collections)}")
    collections = list(collections)
    if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
        collections.append(GraphKeys.TRAINABLE_VARIABLES)
    return collections


def _initial_value_tensor(initial_value, from_fn: bool, dtype) -> Tensor:
    """TF's placement of the initial value: `Initializer/...` (device-free) for a callable."""
    if not from_fn:
        return convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
    graph = get_default_graph()
    with graph.name_scope("Initializer"), graph.device(None):
        return convert_to_tensor(initial_value(), name="initial_value", dtype=dtype)


def _variable_shape(initial_value: Tensor, validate_shape: bool, shape) -> TensorShape:
    if shape is not None:
        return TensorShape(shape)
    return initial_value.shape if validate_shape else TensorShape(None)


def _snapshot(graph, ref: Tensor, caching_device) -> Tensor:
    if caching_device is not None:
        with graph.device(caching_device):
            return identity(ref, name="read")
    with graph.colocate_with(ref.op):
        return identity(ref, name="read")


def _prepend_scope(name: str, import_scope) -> str:
    if not import_scope:
        return name
    if name.startswith("^"):
        return f"^{import_scope}/{name[1:]}"
    return f"{import_scope}/{name}"


# -- collections -----------------------------------------------------------------------------
def global_variables(scope=None) -> list:
    """Variables in the GLOBAL_VARIABLES collection (optionally filtered by name regex)."""
    return get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables() -> list:
    """Deprecated alias of `global_variables()`."""
    return global_variables()


def local_variables(scope=None) -> list:
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None) -> list:
    return get_collection(GraphKeys.MODEL_VARIABLES, scope)


def trainable_variables(scope=None) -> list:
    return get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def moving_average_variables(scope=None) -> list:
    return get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


# -- initializer ops -------------------------------------------------------------------------
def variables_initializer(var_list, name="init"):
    """One op running the initializers of `var_list` (a NoOp when the list is empty)."""
    from tensorweave.ops.control_flow_ops import group, no_op

    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


def initialize_variables(var_list, name="init"):
    """Deprecated alias of `variables_initializer`."""
    return variables_initializer(var_list, name=name)


def global_variables_initializer():
    """The op `init` initializing every global variable."""
    return variables_initializer(global_variables())


def initialize_all_variables():
    """Deprecated alias of `global_variables_initializer`."""
    return global_variables_initializer()


def local_variables_initializer():
    """The op initializing every local variable (named `init_1` when `init` exists)."""
    return variables_initializer(local_variables())


def initialize_local_variables():
    """Deprecated alias of `local_variables_initializer`."""
    return local_variables_initializer()


def is_variable_initialized(variable):
    """A scalar bool tensor: whether `variable` holds a value."""
    return state_ops.is_variable_initialized(variable)


def _default_var_list(var_list):
    if var_list is not None:
        return var_list
    found = global_variables() + local_variables()
    if found:
        return found
    return [op.outputs[0] for op in get_default_graph().get_operations()
            if op_traits(op.type).variable and op.outputs[0].dtype.is_ref_dtype]


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor naming the variables of `var_list` that hold no value yet."""
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.gather_ops import boolean_mask
    from tensorweave.ops.joining_ops import stack
    from tensorweave.ops.math_ops import logical_not

    var_list = _default_var_list(var_list)
    graph = get_default_graph()
    with graph.name_scope(name):
        init_vars = [state_ops.is_variable_initialized(v) for v in var_list]
        with graph.device("/cpu:0"):
            if not var_list:
                return constant([], dtype=dtypes.string)
            mask = logical_not(stack(init_vars))
            names = constant([v.op.name for v in var_list])
            return boolean_mask(names, mask)


def assert_variables_initialized(var_list=None):
    """An op that fails with FailedPreconditionError while a variable is uninitialized."""
    from tensorweave.ops.array_ops import rank
    from tensorweave.ops.joining_ops import stack

    var_list = _default_var_list(var_list)
    if not var_list:
        return None
    ranks = []
    graph = get_default_graph()
    for var in var_list:
        with graph.colocate_with(var.op):
            ranks.append(rank(var))
    return ranks[0] if len(ranks) == 1 else stack(ranks)


__all__ = [
    "Variable", "VariableV1", "global_variables", "all_variables", "local_variables",
    "model_variables", "trainable_variables", "moving_average_variables",
    "variables_initializer", "initialize_variables", "global_variables_initializer",
    "initialize_all_variables", "local_variables_initializer", "initialize_local_variables",
    "is_variable_initialized", "report_uninitialized_variables",
    "assert_variables_initialized",
]
