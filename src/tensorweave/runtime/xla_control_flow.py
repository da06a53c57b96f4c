"""While loops inside an XLA executable: TF1's frames (Enter/Merge/Switch/LoopCond/
NextIteration/Exit, as tf.while_loop, tf.scan, dynamic_rnn and their gradients build them)
rebuilt as `lax.while_loop`.

`Structure(items)` finds each node's frame (an Enter opens its `frame_name` inside its input's
frame, an Exit leaves it) and each loop's variables (Enter → Merge → Switch, NextIteration
back into the Merge, Exit from the Switch). `run(needed, env, eval_item)` evaluates the
partition's nodes in an order where a loop is one unit; a loop runs as:

1. Invariants (constant Enters) are the outer values, closed over by the loop's functions.
2. Static variables - a concrete initial value and an update computed only from static
   values (the iteration counters, `time` in dynamic_rnn, the gradient's count) - are run
   ahead in numpy: a condition that depends on them alone gives the trip count N (the
   condition becomes `k < N`, and their Exits are constants, so the gradient loop's count is
   static too); a conjunct of the condition that does gives an upper bound (`maximum_iterations`).
3. Stacks and TensorArrays the loop touches (`data_flow.TraceResource`) are carried; one whose
   element shape is not yet known is found by tracing the body abstractly first
   (`jax.eval_shape`), and sized by the loops' bounds.
4. `lax.while_loop(cond, body, (k, variables, resource buffers))`; Exits take the results.

`parallel_iterations`, `swap_memory` and `back_prop` attrs are ignored, as XLA does. A
tf.cond (Switch/Merge outside a loop's pattern) is not lowered: `placement_off_xla` keeps
it, and every loop this module cannot compile (no kernel for a node, a variable updated in
the loop, a stack with no static bound), on a CPU, with a logged reason.
"""

from __future__ import annotations

import heapq
import logging
from typing import Any

import numpy as np

from tensorweave import dtypes, errors, ir
from tensorweave.ops.registry import OPS, arg_dtypes, full_attrs, op_traits
from tensorweave.runtime.kernels.registry import has_kernel
from tensorweave.runtime.kernels.xla.backend import is_compiled_device, jax_modules
from tensorweave.runtime.kernels.xla.data_flow import TraceResource, active_bounds
from tensorweave.runtime.kernels.xla.lower import STATE_WRITERS, VarState

_LOG = logging.getLogger("tensorweave")
_ENTER, _EXIT = ("Enter", "RefEnter"), ("Exit", "RefExit")
_MERGE, _SWITCH = ("Merge", "RefMerge"), ("Switch", "RefSwitch")
_NEXT = ("NextIteration", "RefNextIteration")
STRUCTURAL = frozenset(_ENTER + _EXIT + _MERGE + _SWITCH + _NEXT)
SIMULATION_CAP = 1_000_000   # static iterations run ahead at most (more: no static count)
_GOLDEN = np.uint32(0x9E3779B9)


class LoopVar:
    """One loop variable: its Enter, Merge, Switch, NextIteration and Exits (plan items)."""

    __slots__ = ("enter", "merge", "switch", "next", "exits")

    def __init__(self, enter, merge):
        self.enter, self.merge = enter, merge
        self.switch = self.next = None
        self.exits: list = []


class Frame:
    """A while loop's frame: its own nodes (`items`), nested frames, variables, LoopCond."""

    def __init__(self, name: str, parent: Frame | None):
        self.name, self.parent = name, parent
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.items: list = []
        self.children: list[Frame] = []
        self.vars: list[LoopVar] = []
        self.invariants: list = []
        self.loop_cond: Any = None
        self.units: list = []          # items and child frames, in run order
        self.subtree: set[int] = set()  # indices of the nodes of this frame and nested ones

    def __repr__(self) -> str:
        return f"<while loop {self.name}>"


def _unimplemented(node, msg: str) -> errors.OpError:
    return errors.UnimplementedError(node, None, msg)


class Structure:
    """The frames of a partition's body items (in plan order: topological, back edges cut)."""

    def __init__(self, items: list, by_index: dict):
        self.by_index = by_index
        self.frame_of: dict[int, Frame | None] = {}
        self.frames: list[Frame] = []
        self._items = items
        for it in items:
            self.frame_of[it.index] = self._frame_for(it)
        for it in items:
            f = self.frame_of[it.index]
            if f is not None:
                f.items.append(it)
                g: Frame | None = f
                while g is not None:
                    g.subtree.add(it.index)
                    g = g.parent
        for f in self.frames:
            self._loop_parts(f)
        self.top = self._schedule(None, [it for it in items if self.frame_of[it.index] is None])
        for f in self.frames:
            f.units = self._schedule(f, f.items)
        self._check_conds(items)

    @property
    def has_loops(self) -> bool:
        return bool(self.frames)

    # -- building ------------------------------------------------------------------------------
    def _frame_for(self, it) -> Frame | None:
        srcs = [j for j, _ in it.inputs] + list(it.control_inputs)
        if it.op in _MERGE:
            srcs = [j for j in srcs if j in self.frame_of]  # NOTE: the back edge comes later
        known = [self.frame_of.get(j) for j in srcs if j in self.frame_of]
        base = max(known, key=lambda f: -1 if f is None else f.depth, default=None)
        if it.op in _ENTER:
            name = it.attrs.get("frame_name", "")
            for f in self.frames:
                if f.name == name and f.parent is base:
                    return f
            f = Frame(name, base)
            self.frames.append(f)
            if base is not None:
                base.children.append(f)
            return f
        if it.op in _EXIT:
            return None if base is None else base.parent
        return base

    def _loop_parts(self, f: Frame) -> None:
        by = self.by_index
        for it in f.items:
            if it.op in _ENTER:
                if it.attrs.get("is_constant"):
                    f.invariants.append(it)
            elif it.op == "LoopCond":
                if f.loop_cond is not None:
                    raise _unimplemented(it.node, f"{f}: two LoopConds in one frame")
                f.loop_cond = it
            elif it.op in _MERGE:
                srcs = [by[j] for j, _ in it.inputs]
                enters = [s for s in srcs if s.op in _ENTER]
                nexts = [s for s in srcs if s.op in _NEXT]
                if len(srcs) != 2 or len(enters) != 1 or len(nexts) != 1:
                    raise _unimplemented(it.node, f"Merge {it.name} in {f} is not a loop "
                                                  "variable's (a tf.cond inside the loop)")
                var = LoopVar(enters[0], it)
                var.next = nexts[0]
                f.vars.append(var)
        if f.loop_cond is None:
            raise _unimplemented(None, f"{f} has no LoopCond in this partition")
        for var in f.vars:
            sw = [by[d] for d, s in var.merge.consumers if s == 0 and by[d].op in _SWITCH]
            if len(sw) != 1:
                raise _unimplemented(var.merge.node, f"loop variable {var.merge.name} of {f} "
                                                     "has no single Switch")
            var.switch = sw[0]
            var.exits = [by[d] for d, s in var.switch.consumers if by[d].op in _EXIT]
        switches = {v.switch.index for v in f.vars}
        for it in f.items:
            if it.op in _SWITCH and it.index not in switches:
                raise _unimplemented(it.node, f"Switch {it.name} in {f} is a tf.cond's; a "
                                              "cond inside a loop is not compiled yet")
        entered = {v.enter.index for v in f.vars} | {e.index for e in f.invariants}
        for it in f.items:
            if it.op in _ENTER and it.index not in entered:
                raise _unimplemented(it.node, f"Enter {it.name} of {f} feeds no loop variable "
                                              "and is not constant")

    def _unit_of(self, j: int, level: Frame | None):
        """The unit at `level` that produces node `j` (None: outside the level, available)."""
        f = self.frame_of.get(j)
        if f is level:
            return ("item", j)
        chain = []
        while f is not None and f is not level:
            chain.append(f)
            f = f.parent
        if f is not level:
            return None
        return ("frame", id(chain[-1]))

    def _schedule(self, level: Frame | None, items: list) -> list:
        """The items of `level` and its child frames in an order where each unit's inputs
        come first (Kahn's, stable by plan position)."""
        children = [f for f in self.frames if f.parent is level]
        units = {("item", it.index): it for it in items}
        units.update({("frame", id(f)): f for f in children})
        pos = {it.index: k for k, it in enumerate(self._items)}
        first = {}
        for key, u in units.items():
            first[key] = pos[u.index] if key[0] == "item" else min(pos[j] for j in u.subtree)
        deps: dict = {key: set() for key in units}
        for key, u in units.items():
            members = [u] if key[0] == "item" else [self.by_index[j] for j in u.subtree]
            inside = {u.index} if key[0] == "item" else u.subtree
            for m in members:
                if m.op in _MERGE:
                    srcs = [j for j, _ in m.inputs if self.by_index[j].op not in _NEXT]
                else:
                    srcs = [j for j, _ in m.inputs]
                for j in srcs + list(m.control_inputs):
                    if j in inside:
                        continue
                    d = self._unit_of(j, level)
                    if d is not None and d != key and d in units:
                        deps[key].add(d)
        users: dict = {key: [] for key in units}
        for key, ds in deps.items():
            for d in ds:
                users[d].append(key)
        left = {key: len(ds) for key, ds in deps.items()}
        heap = [(first[k], k) for k, n in left.items() if n == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            _, key = heapq.heappop(heap)
            order.append(units[key])
            for u in users[key]:
                left[u] -= 1
                if left[u] == 0:
                    heapq.heappush(heap, (first[u], u))
        if len(order) != len(units):
            raise _unimplemented(None, f"the loops of {level or 'this partition'} depend on "
                                       "each other in a cycle")
        return order

    def _check_conds(self, items) -> None:
        for it in items:
            if self.frame_of[it.index] is None and it.op in _SWITCH + _MERGE:
                raise _unimplemented(it.node, f"{it.op} {it.name} is a tf.cond's: XLA "
                                              "devices compile loops but not conds; place "
                                              "it on a CPU")

    def close(self, needed: set[int]) -> set[int]:
        """`needed` plus every node of each outermost loop it touches, and what those use."""
        needed = set(needed)
        stack: list[int] = []
        for root in self.frames:
            if root.parent is None and root.subtree & needed:
                stack.extend(root.subtree - needed)
        while stack:
            j = stack.pop()
            if j in needed:
                continue
            needed.add(j)
            it = self.by_index[j]
            stack.extend(i for i, _ in it.inputs)
            f: Frame | None = self.frame_of.get(j)
            while f is not None and f.parent is not None:
                f = f.parent
            if f is not None and not f.subtree <= needed:
                stack.extend(f.subtree - needed)
        return needed

    # -- running -------------------------------------------------------------------------------
    def run(self, needed: set[int], env: dict, eval_item) -> None:
        """Evaluates the `needed` nodes into `env` (index → output tuple);
        `eval_item(item, iterations)` evaluates one ordinary node from `env` (`iterations`:
        the traced iteration indices of the loops around it, for `salted`)."""
        _Runner(self, env, eval_item).units(self.top, needed)


def salted(counter, iterations: list):
    """A random op's step counter made distinct per iteration of the loops around it."""
    _, jnp, _ = jax_modules()
    c = jnp.asarray(counter, jnp.uint32)
    for k in iterations:
        c = c * _GOLDEN + jnp.asarray(k, jnp.uint32) + np.uint32(1)
    return c


class _Runner:
    """Runs a Structure's units into one env (one trace)."""

    def __init__(self, structure: Structure, env: dict, eval_item):
        self.s = structure
        self.env = env
        self.eval_item = eval_item
        self.iterations: list = []     # the traced iteration index of each enclosing loop

    def units(self, units: list, needed=None) -> None:
        for u in units:
            if isinstance(u, Frame):
                if needed is None or u.subtree & needed:
                    self.loop(u)
            elif (needed is None or u.index in needed) and u.op not in STRUCTURAL:
                self.eval_item(u, self.iterations)

    def value(self, item, k: int = 0):
        j, slot = item.inputs[k]
        v = self.env[j][slot]
        if isinstance(v, VarState) and item.deref[k]:
            v = v.read()
        return v

    # -- one loop ------------------------------------------------------------------------------
    def loop(self, f: Frame) -> None:
        jax, jnp, lax = jax_modules()
        env = self.env
        for e in f.invariants:
            env[e.index] = (self.value(e),)
        inits = [self.value(v.enter) for v in f.vars]
        for v, x in zip(f.vars, inits):
            if isinstance(x, (TraceResource, VarState)):
                raise _unimplemented(v.enter.node, f"{f}: a loop variable holding a handle "
                                                   "is not compiled")
        static = self._static_vars(f, inits)
        trips, bound, finals = self._simulate(f, static, inits)
        resources = self._resources(f)
        dtypes_ = [jnp.asarray(x).dtype for x in inits]
        shapes = [tuple(np.shape(x)) for x in inits]

        def set_state(k, vals, leaves):
            it = iter(leaves)
            for r in resources:
                n = len(r.leaves())
                r.set_leaves([next(it) for _ in range(n)])
            for v, x in zip(f.vars, vals):
                env[v.merge.index] = (x, jnp.where(k == 0, np.int32(0), np.int32(1)))
                env[v.switch.index] = (x, x)

        def body(carry):
            k, vals, leaves = carry
            set_state(k, vals, leaves)
            self.iterations.append(k)
            try:
                self.units(f.units)
            finally:
                self.iterations.pop()
            new = []
            for v, d, shape in zip(f.vars, dtypes_, shapes):
                x = self.value(v.next)
                if tuple(np.shape(x)) != shape:
                    raise errors.InvalidArgumentError(
                        v.next.node, None,
                        f"{f}: loop variable {v.merge.name} has shape {list(shape)} on entry "
                        f"and {list(np.shape(x))} after an iteration; an XLA loop keeps its "
                        "variables' shapes (TF's shape_invariants)")
                new.append(jnp.asarray(x, d))
            return k + np.int32(1), new, [x for r in resources for x in r.leaves()]

        def cond(carry):
            k, vals, leaves = carry
            if trips is not None:
                return k < np.int32(trips)
            set_state(k, vals, leaves)
            pred = self._pred(f)
            return pred if bound is None else jnp.logical_and(pred, k < np.int32(bound))

        active_bounds().append(trips if trips is not None else bound)
        try:
            self._discover(f, resources, body, inits)
            carry = (np.int32(0), [jnp.asarray(x, d) for x, d in zip(inits, dtypes_)],
                     [x for r in resources for x in r.leaves()])
            k, vals, leaves = lax.while_loop(cond, body, carry)
        finally:
            active_bounds().pop()
        it = iter(leaves)
        for r in resources:
            r.set_leaves([next(it) for _ in range(len(r.leaves()))])
        for n, (v, x) in enumerate(zip(f.vars, vals)):
            if finals is not None and n in static:
                x = finals[n]
            for e in v.exits:
                env[e.index] = (x,)

    def _pred(self, f: Frame):
        """Evaluates the loop condition's nodes (after the variables are set)."""
        cone = self._cone(f, f.loop_cond.inputs[0][0])
        for it in f.items:
            if it.index in cone and it.op not in STRUCTURAL:
                if it.op_def.is_stateful:
                    raise _unimplemented(it.node, f"{f}: a stateful op in the loop condition")
                self.eval_item(it, self.iterations)
        return self.value(f.loop_cond)

    def _cone(self, f: Frame, root: int) -> set[int]:
        """The nodes of frame `f` (its own level) that `root` depends on, stopping at the
        variables' Merges."""
        seen, stack = set(), [root]
        while stack:
            j = stack.pop()
            if j in seen or self.s.frame_of.get(j) is not f:
                continue
            seen.add(j)
            it = self.s.by_index[j]
            if it.op not in _MERGE:
                stack.extend(i for i, _ in it.inputs)
        return seen

    # -- static variables ---------------------------------------------------------------------
    def _static_vars(self, f: Frame, inits) -> set[int]:
        """Positions of the variables with a concrete start whose update needs only static
        values (a fixpoint: a variable drops out when its update reads a dropped one)."""
        static = {n for n, x in enumerate(inits) if _concrete(x)}
        var_of = {}
        for n, v in enumerate(f.vars):
            var_of[v.merge.index] = var_of[v.switch.index] = n
        while True:
            ok = self._static_items(f, static, var_of)
            keep = {n for n in static if f.vars[n].next.inputs[0][0] in ok}
            if keep == static:
                return static
            static = keep

    def _static_items(self, f: Frame, static: set[int], var_of: dict) -> set[int]:
        ok: set[int] = set()
        for it in f.items:
            if it.index in var_of:
                if var_of[it.index] in static:
                    ok.add(it.index)
            elif it.op in _ENTER:
                if it.attrs.get("is_constant") and _concrete(self.env[it.index][0]):
                    ok.add(it.index)
            elif it.op in STRUCTURAL or it.op_def.is_stateful:
                continue
            elif all(j in ok if self.s.frame_of.get(j) is f else
                     (j in self.env and all(_concrete(x) for x in self.env[j]))
                     for j, _ in it.inputs):
                ok.add(it.index)
        return ok

    def _simulate(self, f: Frame, static: set[int], inits):
        """(trip count, bound, final values by variable position) from running the static
        variables ahead; (None, None, None) when no conjunct of the condition is static."""
        var_of = {}
        for n, v in enumerate(f.vars):
            var_of[v.merge.index] = var_of[v.switch.index] = n
        ok = self._static_items(f, static, var_of)
        conjuncts = _conjuncts(self.s, f, f.loop_cond.inputs[0])
        known = [c for c in conjuncts if c[0] in ok]
        if not known:
            return None, None, None
        exact = len(known) == len(conjuncts)
        vals = {n: inits[n] for n in static}
        order = [it for it in f.items if it.index in ok and it.op not in STRUCTURAL]
        for k in range(SIMULATION_CAP + 1):
            for n, x in vals.items():
                v = f.vars[n]
                self.env[v.merge.index] = (x, np.int32(k > 0))
                self.env[v.switch.index] = (x, x)
            for it in order:
                self.eval_item(it, ())
            if not all(_concrete(self.env[j][s]) for j, s in known):
                return None, None, None
            if not all(bool(self.env[j][s]) for j, s in known):
                return (k, k, vals) if exact else (None, k, None)
            vals = {n: self.value(f.vars[n].next) for n in static}
            if not all(_concrete(x) for x in vals.values()):
                return None, None, None
        return None, None, None

    # -- stacks and TensorArrays ---------------------------------------------------------------
    def _resources(self, f: Frame) -> list:
        """The containers the loop's nodes reach from outside it (and their gradient arrays,
        made now when a TensorArrayGradV3 in the loop asks for one)."""
        by = self.s.by_index
        found: dict[int, TraceResource] = {}
        for j in sorted(f.subtree):
            it = by[j]
            if it.op == "TensorArrayGradV3":
                base = self._outer_source(f, it.inputs[0])
                if isinstance(base, TraceResource) and hasattr(base, "grad"):
                    base.grad(it.attrs.get("source", ""))
            for src, slot in it.inputs:
                if src not in f.subtree and src in self.env:
                    v = self.env[src][slot]
                    if isinstance(v, TraceResource):
                        found[id(v)] = v
        out: list[TraceResource] = []
        stack = list(found.values())
        seen: set[int] = set()
        while stack:
            r = stack.pop()
            if id(r) not in seen:
                seen.add(id(r))
                out.append(r)
                stack.extend(r.children())
        return out

    def _outer_source(self, f: Frame, inp):
        j, slot = inp
        while j in f.subtree and self.s.by_index[j].op in _ENTER:
            j, slot = self.s.by_index[j].inputs[0]
        return None if j in f.subtree else self.env.get(j, (None,) * (slot + 1))[slot]

    def _discover(self, f: Frame, resources: list, body, inits) -> None:
        """Traces the body abstractly once when a carried container has no buffer yet, to
        find its element shape; allocates it."""
        jax, jnp, _ = jax_modules()
        pending = [r for r in resources if r.buf is None]
        if not pending:
            return
        saved = [(r, r.snapshot()) for r in resources]
        for r in pending:
            r.discovering = True
        carry = (np.int32(0), [jnp.asarray(x) for x in inits],
                 [x for r in resources for x in r.leaves()])
        try:
            jax.eval_shape(body, carry)
        finally:
            for r, snap in saved:
                r.restore(snap)
        for r in pending:
            r.allocate()


def _concrete(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic))


def _conjuncts(s: Structure, f: Frame, inp) -> list:
    """The (node, slot) operands of the LogicalAnd tree at `inp` (its own level of `f`)."""
    j, slot = inp
    it = s.by_index[j]
    if it.op == "LogicalAnd" and s.frame_of.get(j) is f:
        return _conjuncts(s, f, it.inputs[0]) + _conjuncts(s, f, it.inputs[1])
    if it.op == "Identity" and s.frame_of.get(j) is f:
        return _conjuncts(s, f, it.inputs[0])
    return [(j, slot)]


# -- placement ----------------------------------------------------------------------------------
_STATIC_SOURCES = frozenset(["Const", "Shape", "Size", "Rank", "ShapeN"])
_CONTAINERS = frozenset(["StackV2", "TensorArrayV3"])


def placement_off_xla(nodes: dict[str, ir.NodeDef], order: list[str],
                      control_flow: set[str]) -> set[str]:
    """The nodes no XLA device may take: `control_flow` (every node in a loop or a cond)
    less the loops this module compiles, plus the other members of a loop kept off (the
    containers its handles tie it to). Logs why a loop that asked for an XLA device stays
    on a CPU."""
    off = set(control_flow)
    if not off and not any(n.op in _CONTAINERS for n in nodes.values()):
        return off
    a = _GraphLoops(nodes, order)
    for members, reason in a.groups():
        if reason is None:
            off -= members
            continue
        off |= members
        asked = sorted({nodes[m].device for m in members if "XLA" in nodes[m].device.upper()})
        if asked:
            _LOG.warning("XLA: %s stays on a CPU (soft placement): %s", a.describe(members),
                         reason)
    return off


class _GraphLoops:
    """Frames and container groups of a full graph (names), for placement."""

    def __init__(self, nodes, order):
        self.nodes, self.order = nodes, [n for n in order if n in nodes]
        self.pos = {name: k for k, name in enumerate(self.order)}
        self.frame: dict[str, tuple | None] = {}
        self.loop_cond: dict[tuple, str] = {}
        for name in self.order:
            self.frame[name] = f = self._frame_for(nodes[name])
            if f and nodes[name].op == "LoopCond":
                self.loop_cond.setdefault(f, name)
        self._static_of: dict[str, bool] | None = None
        self._handles: dict[str, list] = {}

    @property
    def static(self) -> dict[str, bool]:
        if self._static_of is None:
            self._static_of = self._static()
        return self._static_of

    def _srcs(self, n: ir.NodeDef, control=True) -> list[str]:
        out = []
        for i in n.inputs:
            src, _, ctl = ir.parse_input(i)
            if (control or not ctl) and src in self.nodes:
                out.append(src)
        return out

    def _frame_for(self, n: ir.NodeDef):
        known = [self.frame[s] for s in self._srcs(n) if s in self.frame]
        base = max(known, key=lambda f: 0 if f is None else len(f), default=None)
        if n.op in _ENTER:
            return (base or ()) + (n.attrs.get("frame_name", ""),)
        if n.op in _EXIT:
            return (base[:-1] or None) if base else None
        return base

    def _static(self) -> dict[str, bool]:
        """Whether each node's value is known at compile time (constants and shapes and what
        is computed from them, loop variables updated only from such values)."""
        merges = {m for m in self.order if self.nodes[m].op in _MERGE}
        assume = dict.fromkeys(merges, True)
        while True:
            st: dict[str, bool] = {}
            for name in self.order:
                n = self.nodes[name]
                data = self._srcs(n, control=False)
                if n.op in _MERGE:
                    st[name] = assume[name] and all(st.get(s, assume.get(s, False))
                                                    for s in data if s in st)
                elif n.op in _STATIC_SOURCES:
                    st[name] = True
                elif n.op in _ENTER + _EXIT + _SWITCH + _NEXT + ("Identity",):
                    st[name] = bool(data) and st.get(data[0], False)
                else:
                    op_def = OPS.get(n.op)
                    st[name] = op_def is not None and not op_def.is_stateful and bool(data) \
                        and has_kernel(n.op, "CPU") and all(st.get(s, False) for s in data)
            for m in merges:
                nxt = [s for s in self._srcs(self.nodes[m], control=False)
                       if self.nodes[s].op in _NEXT]
                st[m] = st[m] and all(st.get(s, False) for s in nxt)
            new = {m: st[m] for m in merges}
            if new == assume:
                return st
            assume = new

    def groups(self):
        """(members, reason or None) for each loop and each container outside loops: the
        root frame's nodes and everything tied to them by a handle (resource) edge or a
        colocation."""
        uf: dict[str, str] = {}

        def find(x):
            while uf.setdefault(x, x) != x:
                uf[x] = uf[uf[x]]
                x = uf[x]
            return x

        def union(a, b):
            ra, rb = find(a), find(b)
            if ra != rb:
                uf[ra] = rb

        for name in self.order:
            n, f = self.nodes[name], self.frame[name]
            if n.op in _EXIT:   # NOTE: an Exit is in its loop's group (its frame is outside)
                f = next((self.frame.get(s) for s in self._srcs(n, False)), None)
            if f:
                union(name, "frame:" + f[0])
            if n.op in _CONTAINERS:
                find(name)
            for loc in n.attrs.get("_class", None) or ():
                # NOTE: colocation holds too (a cond's gradient Switch sits with its input,
                # a loop's Exit): a loop goes where what it is colocated with can go
                if isinstance(loc, str) and loc.startswith("loc:@") and loc[5:] in self.nodes:
                    union(name, loc[5:])
            for i in n.inputs:
                src, slot, ctl = ir.parse_input(i)
                if not ctl and src in self.nodes and self._is_handle(src, slot):
                    union(name, src)
        by_root: dict[str, set[str]] = {}
        for name in self.order:
            if name in uf:
                by_root.setdefault(find(name), set()).add(name)
        for members in by_root.values():
            if any(self.frame[m] for m in members) or \
                    any(self.nodes[m].op in _CONTAINERS for m in members):
                yield members, self._reason(members)

    def _is_handle(self, name: str, slot: int) -> bool:
        """Whether output `slot` of `name` is a resource (memoized per node)."""
        dts = self._handles.get(name)
        if dts is None:
            n = self.nodes[name]
            op_def = OPS.get(n.op)
            try:
                dts = [] if op_def is None else arg_dtypes(op_def.outputs,
                                                           full_attrs(op_def, n.attrs))
            except (KeyError, TypeError, ValueError):
                dts = []
            self._handles[name] = dts
        return slot < len(dts) and dts[slot] is not None and \
            dts[slot].base_dtype == dtypes.resource

    def describe(self, members: set[str]) -> str:
        frames = sorted({f[0] for f in (self.frame[m] for m in members) if f})
        if frames:
            return "the while loop " + ", ".join(f"'{f}'" for f in frames)
        return "the TensorArray/stack " + ", ".join(
            sorted(m for m in members if self.nodes[m].op in _CONTAINERS))

    def _reason(self, members: set[str]) -> str | None:
        """Why the group cannot be compiled (None: it can)."""
        if len({is_compiled_device(self.nodes[m].device) for m in members}) > 1:
            # NOTE: a loop and its gradient share stacks: split over devices, a handle would
            # cross from XLA to a CPU
            return ("some of its nodes ask for an XLA device and others do not (build the "
                    "loop and its gradient under one device scope)")
        for m in sorted(members, key=self.pos.__getitem__):
            n = self.nodes[m]
            if not has_kernel(n.op, "XLA_CPU", n.attrs):
                return f"{n.op} {m} has no XLA lowering"
            if self.frame[m] and (n.op in STATE_WRITERS or op_traits(n.op).variable):
                return f"{n.op} {m} updates a variable inside the loop"
            if n.op in _SWITCH + _MERGE and not self._loop_part(n):
                return f"{n.op} {m} is a tf.cond's (conds are not compiled)"
            if n.op == "TensorArrayV3" and n.attrs.get("dynamic_size"):
                return f"TensorArray {m} has a dynamic size"
            if n.op == "StackPushV2" and not self._bounded(self.frame[m]):
                return (f"{m} saves values for the gradient in a loop with no static trip "
                        "count (give tf.while_loop a maximum_iterations)")
        return None

    def _loop_part(self, n: ir.NodeDef) -> bool:
        srcs = [self.nodes[s] for s in self._srcs(n, control=False)]
        if n.op in _MERGE:
            return len(srcs) == 2 and {s.op in _ENTER for s in srcs} == {True, False} and \
                any(s.op in _NEXT for s in srcs)
        return len(srcs) == 2 and srcs[0].op in _MERGE and srcs[1].op == "LoopCond" and \
            self._loop_part(srcs[0])

    def _bounded(self, frame) -> bool:
        """Whether every loop from `frame` outwards has a conjunct of its condition that is
        known at compile time."""
        while frame:
            cond = self.loop_cond.get(frame)
            if cond is None or not any(self.static.get(c, False) for c in self._conjunct_names(
                    self._srcs(self.nodes[cond], False)[0])):
                return False
            frame = frame[:-1]
        return True

    def _conjunct_names(self, name: str) -> list[str]:
        n = self.nodes[name]
        if n.op == "LogicalAnd":
            return [c for s in self._srcs(n, False) for c in self._conjunct_names(s)]
        return [name]
