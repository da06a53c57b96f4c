"""Helpers shared by cond, while_loop and the functional ops.

- `nest`-style structure helpers (`flatten`, `pack_sequence_as`, `assert_same_structure`,
  `map_structure`) with TF's rules: lists, tuples, namedtuples and dicts (sorted keys) are
  structures; everything else (Tensors, Operations, TensorArrays, None) is a leaf.
- Which control-flow context an op was built in (`get_context`, `get_output_context`,
  `is_containing_context`, ...), TF's `control_flow_util`.
- Small graph edits the builders need after an op exists (replace an input, drop control
  inputs), and `outside_context` to build an op outside the current context.
"""

from __future__ import annotations

import contextlib

# -- structures -----------------------------------------------------------------------------


def is_sequence(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def _children(x) -> list:
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure) -> list:
    """The leaves of `structure`, depth first (dict values by sorted key)."""
    if not is_sequence(structure):
        return [structure]
    out: list = []
    for c in _children(structure):
        out.extend(flatten(c))
    return out


def _rebuild(template, values):
    if isinstance(template, dict):
        out = dict(zip(sorted(template), values))
        if type(template) is dict:
            return out
        try:
            return type(template)(out)
        except TypeError:       # a dict subclass with another constructor
            return out
    if hasattr(template, "_fields"):
        return type(template)(*values)
    return type(template)(values)


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence` shaped like `structure`.

    Raises:
      ValueError: the number of leaves differs.
    """
    flat_sequence = list(flat_sequence)
    if not is_sequence(structure):
        if len(flat_sequence) != 1:
            raise ValueError(f"Structure is a scalar but len(flat_sequence) == "
                             f"{len(flat_sequence)} > 1")
        return flat_sequence[0]
    n = len(flatten(structure))
    if n != len(flat_sequence):
        raise ValueError(
            f"Could not pack sequence. Structure had {n} elements, but flat_sequence had "
            f"{len(flat_sequence)} elements.  Structure: {structure}, flat_sequence: "
            f"{flat_sequence}.")
    it = iter(flat_sequence)
    return _pack(structure, it)


def _pack(structure, it):
    if not is_sequence(structure):
        return next(it)
    return _rebuild(structure, [_pack(c, it) for c in _children(structure)])


def assert_same_structure(a, b, check_types: bool = True) -> None:
    """Raises ValueError (different nesting or lengths) or TypeError (different types)."""
    if is_sequence(a) != is_sequence(b):
        raise ValueError(
            f"The two structures don't have the same nested structure.\n\nFirst structure: "
            f"{a}\n\nSecond structure: {b}")
    if not is_sequence(a):
        return
    if check_types and _seq_type(a) is not _seq_type(b):
        raise TypeError(
            f"The two structures don't have the same sequence type. First structure has type "
            f"{type(a)}, while second structure has type {type(b)}.")
    if isinstance(a, dict) and sorted(a) != sorted(b):
        raise ValueError(f"The two dictionaries don't have the same set of keys. First "
                         f"structure has keys {sorted(a)}, while second structure has keys "
                         f"{sorted(b)}.")
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError(
            f"The two structures don't have the same number of elements.\n\nFirst structure "
            f"({len(ca)} elements): {a}\n\nSecond structure ({len(cb)} elements): {b}")
    for x, y in zip(ca, cb):
        assert_same_structure(x, y, check_types)


def _seq_type(x):
    return dict if isinstance(x, dict) else type(x)


def map_structure(fn, *structures):
    """`fn` applied leaf-wise to structures of the same shape."""
    for s in structures[1:]:
        assert_same_structure(structures[0], s)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


# -- contexts of ops ------------------------------------------------------------------------


def get_context(op):
    """The control-flow context `op` was built in (None: the root)."""
    return getattr(op, "control_flow_context", None)


def set_context(op, ctxt) -> None:
    op.control_flow_context = ctxt


def is_loop_enter(op) -> bool:
    return op.type in ("Enter", "RefEnter")


def is_loop_constant_enter(op) -> bool:
    return is_loop_enter(op) and bool(op._attrs.get("is_constant"))


def is_loop_exit(op) -> bool:
    return op.type in ("Exit", "RefExit")


def is_switch(op) -> bool:
    return op.type in ("Switch", "RefSwitch")


def is_loop_switch(op) -> bool:
    """A Switch of a while loop's variable (built by the loop itself, not by a cond)."""
    if not is_switch(op):
        return False
    ctxt = get_context(op)
    return ctxt is not None and ctxt.get_while_context() is ctxt


def get_loop_constant_enter(value):
    """The constant Enter that `value` passes through unchanged (through Switch and
    Identity ops), or None."""
    op = value.op
    while op.type in ("Switch", "RefSwitch", "Identity", "RefIdentity"):
        op = op.inputs[0].op
    return op if is_loop_constant_enter(op) else None


def get_output_context(op):
    """The context `op`'s outputs live in (an Exit's outputs live in the parent's)."""
    ctxt = get_context(op)
    if ctxt is not None and is_loop_exit(op):
        ctxt = ctxt.outer_context
    return ctxt


def is_containing_context(ctxt, maybe_containing) -> bool:
    """Whether `maybe_containing` is `ctxt` or one of its outer contexts (None: the root)."""
    while ctxt is not maybe_containing:
        if ctxt is None:
            return False
        ctxt = ctxt.outer_context
    return True


def op_in_context(op, ctxt) -> bool:
    return is_containing_context(get_output_context(op), ctxt)


def get_while_context(op):
    """The innermost while loop context around `op` (None: none, or a function's capture
    context)."""
    get_while = getattr(get_context(op), "get_while_context", None)
    return get_while() if get_while is not None else None


# -- graph edits ----------------------------------------------------------------------------


def update_input(op, index: int, tensor) -> None:
    """Replaces input `index` of `op` by `tensor` (the back edge of a loop's Merge).

    Raises:
      TypeError: the dtypes differ.
    """
    op.replace_input(index, tensor)


def remove_control_inputs(op, to_remove) -> None:
    """Drops the control inputs of `op` that are in `to_remove`."""
    op.remove_control_inputs(to_remove)


@contextlib.contextmanager
def outside_context(graph, clear_control_dependencies: bool = True):
    """Builds ops with no control-flow context (and, by default, no control dependencies).

    TF's `control_dependencies(None)` does both; the builders need it for the Switch/Enter
    ops they add on behalf of a context.
    """
    with graph.in_control_flow_context(None):
        if clear_control_dependencies:
            with graph.scopes.control_dependencies(None):
                yield
        else:
            yield


@contextlib.contextmanager
def op_scope(graph, op_name: str | None):
    """Re-enters `op_name/` so helper ops are named like TF's (`cond/add/Switch`)."""
    if not op_name:
        yield
        return
    with graph.scopes.name_scope(op_name + "/"):
        yield


@contextlib.contextmanager
def entered(ctxt):
    """Makes `ctxt` the graph's current context inside the block (nothing when None)."""
    if ctxt is None:
        yield
        return
    ctxt.enter()
    try:
        yield
    finally:
        ctxt.exit()
