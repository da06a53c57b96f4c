"""`apply_op`: adds a registered op to the default graph, as TF's op_def_library does.

Inputs are converted to tensors, type attrs are inferred from them and checked, attr defaults
are filled in and checked against allowed values, the op is stamped with the active scopes,
and its shape function runs. Every mismatch raises at construction, naming the op, the
argument and what was expected versus found.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Operation, Tensor, user_site
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.registry import OPS, ArgSpec, OpDef
from tensorweave.ops.shape_inference import InferenceContext, ShapeError
from tensorweave.shapes import TensorShape, as_shape


def apply_op(op_type: str, *args, name: str | None = None, **kwargs):
    """Creates op `op_type` with inputs `args` (or keywords by arg name) and attrs `kwargs`.

    Returns:
      The single output Tensor; the Operation when the op has no outputs; otherwise a list
      with one entry per output arg (a list of Tensors for list args).
    Raises:
      TypeError: wrong input dtypes, missing inputs or attrs.
      ValueError: incompatible shapes or disallowed attr values.
    """
    op_def = OPS.lookup(op_type)
    op = create_op(op_def, args, kwargs, name)
    return _structure_outputs(op_def, op)


def create_op(op_def: OpDef, args, kwargs, name=None, graph=None) -> Operation:
    """As TF: literal inputs become constants named after their input inside the op's scope
    (`Sum/reduction_indices`), and the op takes the scope's name."""
    values = _bind_inputs(op_def, args, kwargs)
    attrs = {k: v for k, v in kwargs.items() if v is not None or k in op_def.attrs}
    graph = graph or _graph_for_values(values)
    if all(_is_tensor_value(v) for v in values):
        inputs = _convert_inputs(op_def, values, attrs)
        scope = name
    else:
        with graph.as_default(), graph.scopes.name_scope(name or op_def.name) as scope:
            inputs = _convert_inputs(op_def, values, attrs)
    _fill_attrs(op_def, attrs)
    if graph.resource_container and op_def.stateful and attrs.get("container") == "":
        attrs["container"] = graph.resource_container
    out_dtypes = _output_dtypes(op_def, attrs)
    return add_op(graph, op_def, scope, inputs, attrs, out_dtypes)


def _is_tensor_value(v) -> bool:
    if isinstance(v, Tensor):
        return True
    if isinstance(v, (list, tuple)):
        return bool(v) and all(isinstance(x, Tensor) for x in v)
    return False


def _graph_for_values(values):
    default = get_default_graph()
    if default.building_function:  # NOTE: inside a traced function, ops go to the function
        return default
    for v in values:
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            g = getattr(x, "graph", None)
            if g is not None:
                return g
    return get_default_graph()


def add_op(graph, op_def: OpDef, name, inputs, attrs, out_dtypes) -> Operation:
    """Adds an op whose inputs are Tensors and whose attrs are complete; runs its shape fn.

    When a control-flow context is active (`graph.control_flow_context`, set by cond and
    while_loop), it may rewrite the inputs first (`rewrite_inputs(op_def, inputs)`, e.g. to
    route an outside tensor through a Switch or Enter) and sees the new op (`add_op(op)`).
    """
    graph.check_not_finalized()
    if name and name.endswith("/"):
        op_name = name[:-1]  # a scope name is used exactly, as TF's create_op does
    else:
        op_name = graph.unique_name(name or op_def.name)
    cf = graph.control_flow_context
    if cf is not None:
        inputs = cf.rewrite_inputs(op_def, inputs, op_name)
    shapes = _infer_shapes(op_def, op_name, inputs, attrs, len(out_dtypes))
    override = graph.gradient_override(op_def.name)
    if override is not None:
        attrs["_gradient_op_type"] = override
    op = Operation(graph, op_def, op_name, op_def.name, inputs, attrs, out_dtypes, user_site())
    for t, s in zip(op._outputs, shapes):
        t._shape = s
    _apply_scopes(graph, op_def, op, inputs)
    graph.add_op(op)
    if cf is not None:
        cf.add_op(op)
    return op


def _apply_scopes(graph, op_def: OpDef, op: Operation, inputs) -> None:
    """Control dependencies, device and colocation from the scopes; as TF's op_def_library,
    an op taking a ref input (Assign, ApplyAdam) is colocated with the ref's producer, so
    it lands on the variable's device whatever device function is active."""
    refs = [t.op for t in inputs if t.dtype.is_ref_dtype] if op_def.has_ref_inputs else ()
    if not refs:
        graph.scopes.apply(op, {t.op for t in inputs})
        return
    with graph.scopes.colocate_with(refs[0]):
        graph.scopes.apply(op, {t.op for t in inputs})


def _bind_inputs(op_def: OpDef, args, kwargs) -> list:
    if len(args) > len(op_def.inputs):
        raise TypeError(f"{op_def.name} takes {len(op_def.inputs)} inputs, got {len(args)}")
    values = list(args)
    for spec in op_def.inputs[len(args):]:
        if spec.name not in kwargs:
            raise TypeError(f"{op_def.name} missing required input '{spec.name}'")
        values.append(kwargs.pop(spec.name))
    return values


def _convert_inputs(op_def: OpDef, values, attrs) -> list[Tensor]:
    """Converts inputs, inferring type attrs from Tensors first, then literals."""
    _infer_from_tensors(op_def, values, attrs)
    out: list[Tensor] = []
    for spec, value in zip(op_def.inputs, values):
        out.extend(_convert_arg(op_def, spec, value, attrs))
    return out


def _infer_from_tensors(op_def, values, attrs) -> None:
    for spec, value in zip(op_def.inputs, values):
        if not spec.type_attr or spec.type_attr in attrs:
            continue
        items = value if spec.number_attr and isinstance(value, (list, tuple)) else [value]
        for v in items:
            dt = _known_dtype(v)
            if dt is not None:
                attrs[spec.type_attr] = dt
                break


def _known_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype.base_dtype
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind != "O":
        return dtypes.as_dtype(value.dtype)
    dt = getattr(value, "dtype", None)
    return dt.base_dtype if isinstance(dt, dtypes.DType) else None


def _convert_arg(op_def, spec: ArgSpec, value, attrs) -> list[Tensor]:
    if spec.number_attr or spec.type_list_attr:
        if not isinstance(value, (list, tuple)):
            raise TypeError(
                f"Expected list for '{spec.name}' argument to '{op_def.name}' Op, not {value!r}."
            )
        tensors = [_convert_one(op_def, spec, v, attrs) for v in value]
        if spec.number_attr:
            _set_attr(op_def, attrs, spec.number_attr, len(tensors), spec)
        else:
            _set_attr(op_def, attrs, spec.type_list_attr,
                      [t.dtype.base_dtype for t in tensors], spec)
        return tensors
    return [_convert_one(op_def, spec, value, attrs)]


def _convert_one(op_def, spec: ArgSpec, value, attrs) -> Tensor:
    want = spec.dtype if spec.dtype is not None else attrs.get(spec.type_attr)
    if want is None and spec.type_attr and not isinstance(value, Tensor):
        default = op_def.attrs[spec.type_attr].default
        want = default if isinstance(default, dtypes.DType) else None
        if want is not None and not _fits_dtype(value, want):
            want = None
    try:
        t = convert_to_tensor(value, dtype=want if isinstance(want, dtypes.DType) else None,
                              as_ref=spec.is_ref, name=spec.name)
    except (TypeError, ValueError) as e:
        found = _known_dtype(value)
        if want is not None and found is not None:
            raise TypeError(_type_mismatch(op_def, spec, found, want)) from None
        raise TypeError(
            f"Failed to convert {value!r} for input '{spec.name}' of '{op_def.name}' Op: {e}"
        ) from None
    if spec.is_ref and not t.dtype.is_ref_dtype:
        raise TypeError(
            f"'{op_def.name}' Op requires that input '{spec.name}' be a mutable tensor "
            f"(e.g.: a tf.Variable)"
        )
    if spec.type_attr:
        _set_attr(op_def, attrs, spec.type_attr, t.dtype.base_dtype, spec)
    elif spec.dtype is not None and t.dtype.base_dtype != spec.dtype:
        raise TypeError(_type_mismatch(op_def, spec, t.dtype.base_dtype, spec.dtype))
    return t


def _fits_dtype(value, dtype) -> bool:
    """Whether a Python literal converts to `dtype` without losing its kind."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return False
    if arr.dtype.kind in "USO" or arr.dtype == object:
        return dtype == dtypes.string
    if arr.size == 0:
        return True
    if arr.dtype.kind == "f":
        return dtype.is_floating or dtype.is_complex
    return dtype.is_numeric or (arr.dtype.kind == "b" and dtype.is_bool)


def _type_mismatch(op_def, spec, found, want) -> str:
    return (f"Input '{spec.name}' of '{op_def.name}' Op has type {found.name} that does not "
            f"match expected type of {want.name}.")


def _set_attr(op_def, attrs, attr_name, value, spec) -> None:
    prev = attrs.get(attr_name)
    if prev is not None and prev != value:
        if isinstance(value, dtypes.DType):
            raise TypeError(
                f"Input '{spec.name}' of '{op_def.name}' Op has type {value.name} that does not "
                f"match type {dtypes.as_dtype(prev).name} of argument "
                f"'{_first_arg_with(op_def, attr_name)}'."
            )
        raise ValueError(f"'{op_def.name}' Op: inconsistent values for attr '{attr_name}'")
    attrs[attr_name] = value


def _first_arg_with(op_def, attr_name) -> str:
    for s in op_def.inputs:
        if s.type_attr == attr_name:
            return s.name
    return attr_name


def _fill_attrs(op_def: OpDef, attrs: dict) -> None:
    for k in attrs:
        if k not in op_def.attrs and not k.startswith("_"):
            raise TypeError(f"'{op_def.name}' Op has no attr or input named '{k}'")
    for a in op_def.attrs.values():
        value = attrs.get(a.name)
        if value is None:
            if not a.has_default:
                raise TypeError(f"'{op_def.name}' Op is missing required attr '{a.name}'")
            value = a.default
        attrs[a.name] = _coerce_attr(op_def, a, value)


def _coerce_attr(op_def, a, value):
    t = a.type
    if t == "type":
        value = dtypes.as_dtype(value).base_dtype
        if a.allowed and value not in a.allowed:
            names = ", ".join(d.name for d in a.allowed)
            raise TypeError(
                f"Value passed to parameter '{_first_arg_with(op_def, a.name)}' has DataType "
                f"{value.name} not in list of allowed values: {names} (op '{op_def.name}')"
            )
    elif t == "string":
        value = value.decode() if isinstance(value, bytes) else str(value)
        if a.allowed and value not in a.allowed:
            raise ValueError(f"'{op_def.name}' Op: attr '{a.name}' must be one of "
                             f"{list(a.allowed)}, got '{value}'")
    elif t == "int":
        value = int(value)
        if a.minimum is not None and value < a.minimum:
            raise ValueError(f"'{op_def.name}' Op: attr '{a.name}' must be >= {a.minimum}, "
                             f"got {value}")
    elif t == "float":
        value = float(value)
    elif t == "bool":
        value = bool(value)
    elif t == "shape":
        value = as_shape(value)
    elif t.startswith("list("):
        value = _coerce_list(t[5:-1], value)
        if a.minimum is not None and len(value) < a.minimum:
            raise ValueError(f"'{op_def.name}' Op: attr '{a.name}' needs at least {a.minimum} "
                             f"values, got {len(value)}")
    return value


def _coerce_list(item_type: str, value) -> list:
    conv = {"int": int, "float": float, "bool": bool, "type": dtypes.as_dtype,
            "shape": as_shape,
            "string": lambda v: v.decode() if isinstance(v, bytes) else str(v)}.get(item_type)
    return [conv(v) if conv else v for v in value]


def _output_dtypes(op_def: OpDef, attrs) -> list:
    out = []
    for spec in op_def.outputs:
        if spec.type_list_attr:
            out.extend(attrs[spec.type_list_attr])
            continue
        dt = spec.dtype if spec.dtype is not None else attrs[spec.type_attr]
        if spec.is_ref:
            dt = dt._as_ref
        out.extend([dt] * (attrs[spec.number_attr] if spec.number_attr else 1))
    return out


def _infer_shapes(op_def: OpDef, op_name: str, inputs, attrs, n_out: int) -> list:
    unknown = [TensorShape(None)] * n_out
    if op_def.shape_fn is None or not n_out:
        return unknown
    ctx = InferenceContext(op_name, inputs, attrs)
    try:
        shapes = op_def.shape_fn(ctx)
    except ShapeError as e:
        shown = ", ".join(_fmt_shape(s) for s in ctx.input_shapes)
        raise ValueError(f"{e} for '{op_name}' (op: '{op_def.name}') with input shapes: "
                         f"{shown}.") from None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    return [as_shape(s) if s is not None else TensorShape(None) for s in shapes]


def _fmt_shape(s: TensorShape) -> str:
    dims = s.as_tuple()
    if dims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _structure_outputs(op_def: OpDef, op: Operation):
    outs = op._outputs
    if not outs:
        return op
    if len(op_def.outputs) == 1 and not op_def.outputs[0].is_list:
        return outs[0]
    result, i = [], 0
    for spec in op_def.outputs:
        if spec.is_list:
            n = op._attrs[spec.number_attr] if spec.number_attr else \
                len(op._attrs[spec.type_list_attr])
            result.append(outs[i:i + n])
            i += n
        else:
            result.append(outs[i])
            i += 1
    return result
