"""Control-flow ops (TF1's dataflow control flow) and `cond`, `case`, `group`, `tuple`, `Assert`.

Switch routes a tensor to one of two outputs (the other is dead); Merge forwards whichever
input is live. A `cond` is built from them: every tensor a branch uses from outside goes
through a Switch on the predicate, and the branch results meet in Merges. Loops (Enter, Exit,
NextIteration, LoopCond) are built by `while_loop.py`. The executor side lives in
`runtime/dataflow.py`.
"""

from __future__ import annotations

import builtins

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.control_flow_context import (
    CondContext,
    add_cond_contexts_to_collection,
    flows_to_tensor_arrays,
)
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_tuple = builtins.tuple   # NOTE: this module defines tf.tuple

# -- schemas ---------------------------------------------------------------------------------


def _scalar_input(ctx, i: int) -> None:
    dims = ctx.input_dims(i)
    if dims is not None and len(dims) != 0:
        raise ctx.fail(f"Shape must be rank 0 but is rank {len(dims)}")


def _switch_shape(ctx):
    _scalar_input(ctx, 1)
    return [ctx.input_shape(0), ctx.input_shape(0)]


def _merge_shape(ctx):
    """Dims equal in every input are kept; a rank mismatch gives an unknown shape."""
    out = ctx.input_dims(0)
    for i in range(1, ctx.num_inputs):
        dims = ctx.input_dims(i)
        if out is None or dims is None or len(dims) != len(out):
            out = None
            break
        out = _tuple(a if a == b else None for a, b in zip(out, dims))
    return [TensorShape(None if out is None else list(out)), TensorShape([])]


def _enter_shape(ctx):
    """Unknown unless constant: loop variables get their shape (invariant) from while_loop."""
    return ctx.input_shape(0) if ctx.attr("is_constant") else TensorShape(None)


def _loop_cond_shape(ctx):
    _scalar_input(ctx, 0)
    return TensorShape([])


_FRAME_ATTRS = ["T: type", "frame_name: string", "is_constant: bool = false",
                "parallel_iterations: int = 10"]

register_op("Switch", inputs=["data: T", "pred: bool"],
            outputs=["output_false: T", "output_true: T"], attrs=["T: type"],
            shape_fn=_switch_shape)
register_op("RefSwitch", inputs=["data: Ref(T)", "pred: bool"],
            outputs=["output_false: Ref(T)", "output_true: Ref(T)"], attrs=["T: type"],
            shape_fn=_switch_shape, allows_uninitialized_input=True)
register_op("Merge", inputs=["inputs: N * T"], outputs=["output: T", "value_index: int32"],
            attrs=["T: type", "N: int >= 1"], shape_fn=_merge_shape)
register_op("RefMerge", inputs=["inputs: N * Ref(T)"],
            outputs=["output: Ref(T)", "value_index: int32"],
            attrs=["T: type", "N: int >= 1"], shape_fn=_merge_shape)
register_op("Enter", inputs=["data: T"], outputs=["output: T"], attrs=_FRAME_ATTRS,
            shape_fn=_enter_shape)
register_op("RefEnter", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
            attrs=_FRAME_ATTRS, shape_fn=_enter_shape)
for _name, _ref in (("Exit", False), ("NextIteration", False)):
    register_op(_name, inputs=["data: T"], outputs=["output: T"], attrs=["T: type"],
                shape_fn=unchanged)
    register_op(f"Ref{_name}", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"],
                attrs=["T: type"], shape_fn=unchanged)
register_op("LoopCond", inputs=["input: bool"], outputs=["output: bool"],
            shape_fn=_loop_cond_shape)
register_op("NoOp")
register_op("ControlTrigger")
register_op("Abort", attrs=["error_msg: string = ''", "exit_without_error: bool = false"])
register_op("Assert", inputs=["condition: bool", "data: T"],
            attrs=["T: list(type)", "summarize: int = 3"], stateful=True)


# -- primitive wrappers ----------------------------------------------------------------------


def switch(data, pred, dtype=None, name=None):
    """(output_false, output_true): `data` goes to output_true when `pred`, else output_false.

    The other output is dead: ops that consume it do not run.
    """
    data = convert_to_tensor(data, dtype=dtype)
    pred = convert_to_tensor(pred)
    return _tuple(apply_op("Switch", data, pred, name=name or "Switch"))


def ref_switch(data, pred, name=None):
    return _tuple(apply_op("RefSwitch", data, pred, name=name or "RefSwitch"))


def merge(inputs, name=None):
    """(output, value_index): the value of whichever input is available, and its index."""
    inputs = [convert_to_tensor(x, as_ref=True) if not isinstance(x, Tensor) else x
              for x in inputs]
    op = "RefMerge" if inputs and all(x.dtype.is_ref_dtype for x in inputs) else "Merge"
    return _tuple(apply_op(op, inputs, name=name or "Merge"))


def enter(data, frame_name, is_constant=False, parallel_iterations=10, use_ref=True,
          use_input_shape=True, name=None):
    """Makes `data` available in the child frame `frame_name` (TF's `_Enter`)."""
    data = data if isinstance(data, Tensor) else convert_to_tensor(data)
    op = "RefEnter" if data.dtype.is_ref_dtype and use_ref else "Enter"
    result = apply_op(op, data, frame_name=frame_name, is_constant=is_constant,
                      parallel_iterations=parallel_iterations, name=name or "Enter")
    if use_input_shape:
        result.set_shape(data.shape)
    return result


def exit(data, name=None):  # noqa: A001 - TF's name
    """Makes `data` available to the parent frame."""
    op = "RefExit" if data.dtype.is_ref_dtype else "Exit"
    return apply_op(op, data, name=name or "Exit")


def next_iteration(data, name=None):
    op = "RefNextIteration" if data.dtype.is_ref_dtype else "NextIteration"
    return apply_op(op, data, name=name or "NextIteration")


def loop_cond(input, name=None):  # noqa: A002 - TF's name
    return apply_op("LoopCond", input, name=name or "LoopCond")


def no_op(name=None):
    """An op that does nothing; useful as a target with control dependencies."""
    return apply_op("NoOp", name=name)


def control_trigger(name=None):
    return apply_op("ControlTrigger", name=name)


def abort(error_msg="", exit_without_error=False, name=None):
    return apply_op("Abort", error_msg=error_msg, exit_without_error=exit_without_error,
                    name=name)


def _identity(x, name=None):
    op = "RefIdentity" if x.dtype.is_ref_dtype and _has_op("RefIdentity") else "Identity"
    return apply_op(op, x, name=name)


def _has_op(name: str) -> bool:
    from tensorweave.ops.registry import OPS

    return name in OPS


# -- grouping --------------------------------------------------------------------------------


def with_dependencies(dependencies, output_tensor, name=None):
    """`output_tensor` (through an Identity) computed only after all `dependencies` ran."""
    if not isinstance(output_tensor, Tensor):
        output_tensor = convert_to_tensor(output_tensor)
    g = output_tensor.graph
    with g.as_default(), name_scope(name, "control_dependency",
                                    list(dependencies) + [output_tensor]) as scope:
        with g.colocate_with(output_tensor.op), g.control_dependencies(list(dependencies)):
            return _identity(output_tensor, name=scope)


def group(*inputs, **kwargs):
    """A NoOp ("group_deps") that runs after every input op.

    Inputs on several devices get one NoOp per device ("group_deps/NoOp") under the result.
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unknown keyword arguments: " + ", ".join(kwargs))
    g = _graph_of(inputs)
    with g.as_default(), name_scope(name, "group_deps", list(inputs)) as scope:
        if not inputs:
            return no_op(name=scope)
        by_device: dict[str, list] = {}
        for inp in util.flatten(list(inputs)):
            if not hasattr(inp, "device"):
                raise TypeError(f"Expected tf.group() expected Tensor arguments not '{inp}' "
                                f"with type '{type(inp)}'")
            by_device.setdefault(inp.device or "", []).append(inp)
        if len(by_device) == 1:
            (dev, deps), = by_device.items()
            return _group_control_deps(g, dev, deps, scope)
        per_device = [_group_control_deps(g, d, by_device[d], None) for d in sorted(by_device)]
        with g.control_dependencies(per_device):
            return no_op(name=scope)


def _group_control_deps(g, dev, deps, name):
    with g.control_dependencies(deps):
        if not dev:
            return no_op(name=name)
        with g.device(dev):
            return no_op(name=name)


def _graph_of(values):
    for v in util.flatten(list(values)):
        graph = getattr(v, "graph", None)
        if graph is not None:
            return graph
    return get_default_graph()


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF's name
    """Tensors with the same values as `tensors`, each available only once all are computed."""
    with name_scope(name, "tuple", tensors):
        tensors = [t if isinstance(t, (Operation, Tensor)) or t is None else
                   convert_to_tensor(t) for t in tensors]
        gating = [t if isinstance(t, Operation) else t.op for t in tensors if t is not None]
        for c in control_inputs or ():
            if isinstance(c, Tensor):
                c = c.op
            elif not isinstance(c, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {c}")
            gating.append(c)
        gating = sorted(set(gating), key=lambda op: op._id)
        if not gating:
            raise ValueError(f"Must have at least one Tensor: {tensors}")
        gate = group(*gating)
        out = []
        for t in tensors:
            if isinstance(t, Tensor):
                out.append(with_dependencies([gate], t))
            elif isinstance(t, Operation):
                with t.graph.control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(None)
        return out


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """Fails the step with InvalidArgumentError("assertion failed: [...]") unless `condition`.

    Data that is not all int32/string is only summarized when the assertion fails (the Assert
    sits in the false branch of a cond, as in TF).
    """
    with name_scope(name, "Assert", [condition] + list(data)):
        xs = [convert_to_tensor(x) for x in data]
        if all(x.dtype.base_dtype in (dtypes.string, dtypes.int32) for x in xs):
            return apply_op("Assert", condition, xs, summarize=summarize, name="Assert")
        condition = convert_to_tensor(condition, name="Condition")

        def true_assert():
            return apply_op("Assert", condition, xs, summarize=summarize, name="Assert")

        guarded = cond(condition, no_op, true_assert, name="AssertGuard")
        return guarded.op


# -- cond ------------------------------------------------------------------------------------


def _unpack_if_singleton(res):
    if isinstance(res, (list, _tuple)) and len(res) == 1:
        return res[0]
    return res


def _as_pred(pred):
    """The predicate as a bool tensor (a Python bool becomes a constant)."""
    if isinstance(pred, bool):
        from tensorweave.ops.constant_op import constant

        return constant(pred, dtype=dtypes.bool_, name="pred")
    return convert_to_tensor(pred)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`true_fn()` if `pred` else `false_fn()`; only the taken branch runs.

    Both functions must return the same structure of tensors (singleton lists are unpacked
    unless `strict`). Tensors a branch uses from outside go through a Switch on `pred`; the
    results are Merges.

    Raises:
      TypeError: a function is missing or not callable, `pred` is not bool, or the branches
        return different types.
      ValueError: a branch returns None or different structures, or `pred` is not a scalar.
    """
    true_fn = _pick_fn(true_fn, fn1, "true_fn", "fn1")
    false_fn = _pick_fn(false_fn, fn2, "false_fn", "fn2")
    with name_scope(name, "cond", [pred]):
        pred = _as_pred(pred)
        p_2, p_1 = switch(pred, pred)
        pivot_1 = _identity(p_1, name="switch_t")
        pivot_2 = _identity(p_2, name="switch_f")
        pred = _identity(pred, name="pred_id")
        orig_t, res_t, ctx_t = _build_branch(pred, pivot_1, 1, true_fn, "true_fn")
        orig_f, res_f, ctx_f = _build_branch(pred, pivot_2, 0, false_fn, "false_fn")
        if not strict:
            orig_t, orig_f = _unpack_if_singleton(orig_t), _unpack_if_singleton(orig_f)
        _check_branches(orig_t, orig_f, res_t, res_f)
        flat_t, flat_f = util.flatten(res_t), util.flatten(res_f)
        merges = [merge([f, t])[0] for f, t in zip(flat_f, flat_t)]
        merges = flows_to_tensor_arrays(util.flatten(orig_t), merges)
        add_cond_contexts_to_collection(ctx_t, ctx_f)
        merges = util.pack_sequence_as(orig_t, merges)
        return _unpack_if_singleton(merges) if not strict else merges


def _pick_fn(fn, old, new_name: str, old_name: str):
    if old is not None:
        if fn is not None:
            raise TypeError(f"cond(): {new_name} and {old_name} may not be set simultaneously.")
        fn = old
    elif fn is None:
        raise TypeError(f"cond(): {new_name} argument required")
    if not callable(fn):
        raise TypeError(f"{new_name} must be callable.")
    return fn


def _build_branch(pred, pivot, branch, fn, fn_name):
    ctxt = CondContext(pred, pivot, branch)
    try:
        ctxt.enter()
        orig, res = ctxt.build_cond_branch(fn)
        if orig is None:
            raise ValueError(f"{fn_name} must have a return value.")
        ctxt.exit_result(res)
    finally:
        ctxt.exit()
    return orig, res, ctxt


def _check_branches(orig_t, orig_f, res_t, res_f) -> None:
    try:
        util.assert_same_structure(orig_t, orig_f)
    except TypeError as e:
        raise TypeError(f"Incompatible return types of true_fn and false_fn: {e}") from None
    except ValueError as e:
        raise ValueError(f"Incompatible return values of true_fn and false_fn: {e}") from None
    if not res_t:
        raise ValueError("true_fn and false_fn must return at least one result.")
    for x, y in zip(util.flatten(res_t), util.flatten(res_f)):
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise ValueError(f"Outputs of true_fn and false_fn must have the same type: "
                             f"{x.dtype.name}, {y.dtype.name}")


# -- case ------------------------------------------------------------------------------------


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The result of the first `fn` whose `pred` is true, else `default()`.

    Built as nested conds, evaluated in order. With `exclusive`, asserts at run time that at
    most one predicate is true. Without a `default`, the last pair's fn is the default, and
    the step fails when no predicate is true.
    """
    preds, fns = _case_args(pred_fn_pairs)
    with name_scope(name, "case", list(preds)):
        if default is None:
            default, preds, fns = _case_default_action(preds, fns)
        fn = default
        for pred, action in reversed(list(zip(preds, fns))):
            fn = _partial_cond(pred, action, fn, strict)
        if exclusive:
            with get_default_graph().control_dependencies(
                    [_assert_at_most_n_true(preds, 1, "Input error: exclusive=True")]):
                return fn()
        return fn()


def _partial_cond(pred, true_fn, false_fn, strict):
    return lambda: cond(pred, true_fn=true_fn, false_fn=false_fn, strict=strict)


def _case_args(pairs):
    if not isinstance(pairs, (list, _tuple, dict)):
        raise TypeError("fns must be a list, tuple, or dict")
    if isinstance(pairs, dict):
        pairs = sorted(pairs.items(), key=lambda item: item[0].name)
    for pair in pairs:
        if not isinstance(pair, _tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple")
        pred, fn = pair
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if pred.dtype.base_dtype != dtypes.bool_:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if not pairs:
        return (), ()
    preds, fns = zip(*pairs)
    return preds, fns


def _case_default_action(preds, fns):
    k = len(preds) - 1
    pred, action = preds[k], fns[k]
    others, other_fns = preds[:k], fns[:k]

    def default_action():
        others_msg = (f"Implementation error: selected default action #{k} was called, but "
                      "some of other predicates are True: ")
        default_msg = ("Input error: None of conditions evaluated as True:",
                       _stack(preds, "preds_c"))
        deps = [Assert(pred, data=default_msg)]
        if others:
            deps.insert(0, _assert_at_most_n_true(others, 0, others_msg))
        with get_default_graph().control_dependencies(deps):
            return action()

    return default_action, others, other_fns


def _stack(values, name):
    from tensorweave.ops import joining_ops

    return joining_ops.stack(list(values), name=name)


def _assert_at_most_n_true(preds, n, msg):
    from tensorweave.ops import math_ops, reduction_ops
    from tensorweave.ops.constant_op import constant

    preds_c = _stack(preds, "preds_c")
    num_true = reduction_ops.reduce_sum(math_ops.cast(preds_c, dtypes.int32),
                                        name="num_true_conds")
    condition = math_ops.less_equal(num_true, constant(n, name="n_true_conds"))
    names = ", ".join(getattr(p, "name", "?") for p in preds)
    error = [f"{msg}: more than {n} conditions ({names}) evaluated as True:", preds_c]
    return Assert(condition, data=error, summarize=len(preds))


__all__ = [
    "Assert", "case", "cond", "group", "no_op", "tuple", "with_dependencies", "switch",
    "merge", "control_trigger",
]
