"""Executors: run one partition's plan per step.

`Executor` picks the fastest correct strategy for its plan:
- a partition without control flow compiles to straight-line Python (one line per node, each
  kernel bound as a local), so a step costs the kernel calls and little else; one that
  receives several tensors runs its parts as their receives arrive
  (`runtime/receive_driven.py`);
- a partition with Switch/Merge or loops runs on the dataflow interpreter
  (`runtime/dataflow.py`), which tracks dead tensors and frames.

The first failing node aborts the step with an `errors.*` class naming the node and its op
(the client adds where the user created it). A fetched array never aliases a constant or a
variable: such outputs are copied before they are returned.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu import parallel
from tensorweave.runtime.plan import RECV_OPS, Plan
from tensorweave.runtime.resources import deref
from tensorweave.runtime.step import StepContext

_plan_ids = itertools.count()


def to_op_error(e: BaseException, node) -> errors.OpError:
    """The `errors.*` error for exception `e` raised by `node`'s kernel, annotated."""
    if isinstance(e, errors.OpError):
        if e.node_def is not None and e.node_def is not node:
            return e  # already annotated by an inner executor (e.g. a function call)
        return errors.annotate(e, node, None)
    if isinstance(e, MemoryError):
        err = errors.ResourceExhaustedError(node, None, f"OOM when running {node.op}: {e}")
    elif isinstance(e, (ValueError, IndexError, TypeError, ZeroDivisionError, KeyError,
                        FloatingPointError, OverflowError)):
        err = errors.InvalidArgumentError(node, None, f"{type(e).__name__}: {e}")
    else:
        err = errors.InternalError(node, None, f"{type(e).__name__}: {e}")
    out = errors.annotate(err, node, None)
    out.__cause__ = e
    return out



def _expensive(item) -> bool:
    """Worth a thread hop (~20 µs): releases the GIL and runs long on real inputs."""
    return item.op_def.traits.expensive


class Executor:
    """Runs a partition. Build once; `run` may be called from several threads at once
    (each call is an independent step).

    Independent expensive nodes of a control-flow-free plan run concurrently on the step's
    inter-op pool (`ctx.inter_op`, else this executor's `pool`; none: inline); everything
    else runs in the caller's thread. The step's intra-op pool (`ctx.intra_op`, a session's
    kernel threads: runtime/threads.py) is current on every thread that runs one of its
    kernels. A step's executor (`step=True`) sets the CPU kernels' thread mode its plan
    wants as it starts (`parallel.plan_wants_pool`: plans without GEMMs or convolutions
    leave it); one that runs a function inside a kernel (a tf.data map function) leaves it
    to the step.
    """

    def __init__(self, plan: Plan, pool=None, step: bool = True):
        self.plan = plan
        self.num_args = len(plan.args)
        self.num_retvals = len(plan.retvals)
        self._runner: Any  # `run(args, ctx)`: compiled code or the dataflow interpreter
        self._traced: Any  # the same, recording step stats (None: compiled on first use)
        if plan.has_control_flow:
            from tensorweave.runtime.dataflow import DataflowRunner

            self._runner = DataflowRunner(plan, _copy_flags(plan))
            self._traced = self._runner
        elif plan.receive_driven:
            from tensorweave.runtime.receive_driven import compile_receive_driven

            self._runner = compile_receive_driven(plan, traced=False)
            self._traced = compile_receive_driven(plan, traced=True)
        else:
            waves = _parallel_waves(plan)
            self._runner = _compile(plan, traced=False,
                                    pool=_Submitter(pool) if waves else None)
            self._traced = None
        self._lock = threading.Lock()
        self._step = step
        self._pool_mode = parallel.plan_wants_pool(item.op_def.traits.compute_class
                                                  for item in plan.items)

    def run(self, args: list, ctx: StepContext) -> list:
        """Runs one step: `args` feed the `_Arg` nodes in index order; returns the retvals.

        Raises:
          errors.OpError: the first node that failed, annotated with its name and op.
        """
        if self._step and self._pool_mode is not None:
            parallel.set_pool_mode(self._pool_mode)
        if ctx.intra_op is None:
            return self._run(args, ctx)
        prev = parallel.enter(ctx.intra_op)
        try:
            return self._run(args, ctx)
        finally:
            parallel.leave(prev)

    def _run(self, args, ctx):
        if ctx.stats is not None:
            return self._run_traced(args, ctx)
        return self._runner.run(args, ctx)

    def _run_traced(self, args, ctx):
        if self._traced is None:
            with self._lock:
                if self._traced is None:
                    self._traced = _compile(self.plan, traced=True)
        return self._traced.run(args, ctx)


class _Submitter:
    """`submit(ctx, fn, *args)` of the compiled code: `fn(*args)` on the step's inter-op pool
    (`ctx.inter_op`, else the executor's), with the step's intra-op pool current there; on the
    caller's thread when there is no pool (or it is `threads.INLINE`)."""

    def __init__(self, pool):
        self._pool = pool

    def __call__(self, ctx, fn, *args):
        pool = ctx.inter_op if ctx.inter_op is not None else self._pool
        if pool is None or not hasattr(pool, "submit"):
            return _Done(fn(*args))
        return pool.submit(parallel.run_in, parallel.current(), fn, *args)


class _Done:
    """A node run inline, collected like a future."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value

    def result(self):
        return self._value


def _copy_flags(plan: Plan) -> dict[int, bool]:
    """For each node output feeding a `_Retval`: may it alias persistent storage?"""
    memo: dict[tuple[int, int], bool] = {}

    def aliases(i: int, slot: int) -> bool:
        key = (i, slot)
        if key not in memo:
            memo[key] = False
            item = plan.by_index[i]
            dt = item.output_dtypes[slot] if slot < len(item.output_dtypes) else None
            memo[key] = (item.op_def.traits.persistent or (dt is not None and dt.is_ref_dtype)
                         or (item.forwards_input and any(
                             aliases(j, s) or d for (j, s), d in zip(item.inputs, item.deref))))
        return memo[key]

    out = {}
    for _, i in plan.retvals:
        item = plan.by_index[i]
        j, slot = item.inputs[0]
        out[i] = aliases(j, slot) or item.deref[0]
    return out


class _Compiled:
    """A plan compiled to one Python function of straight-line code."""

    def __init__(self, fn, line_nodes, filename):
        self._fn = fn
        self._line_nodes = line_nodes
        self._filename = filename

    def run(self, args, ctx):
        try:
            with np.errstate(all="ignore"):  # NOTE: as TF: inf/nan results, no warnings
                return self._fn(args, ctx)
        except Exception as e:  # noqa: BLE001 - every kernel failure becomes an OpError
            raise to_op_error(e, self._failing_node(e)) from None

    def _failing_node(self, e):
        tb = e.__traceback__
        node = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self._filename:
                node = self._line_nodes.get(tb.tb_lineno)
            tb = tb.tb_next
        return node


def _levels(plan: Plan) -> dict[int, int]:
    """Each node's depth: 1 + the deepest of its inputs (data and control)."""
    level: dict[int, int] = {}
    for item in plan.items:
        deps = [j for j, _ in item.inputs] + item.control_inputs
        level[item.index] = 1 + max((level[j] for j in deps), default=-1)
    return level


def _recv_late_levels(plan: Plan) -> dict[int, tuple[int, int]]:
    """Each node's (receives on its deepest path, depth): sorted by it, a plan runs everything
    that needs no receive before its first receive, as the plan's own order does (a partition
    sends what it can before it blocks on a peer that may be waiting for those sends). Nodes
    with equal keys are independent."""
    depth = _levels(plan)
    phase: dict[int, int] = {}
    for item in plan.items:
        deps = [j for j, _ in item.inputs] + item.control_inputs
        phase[item.index] = max((phase[j] for j in deps), default=0) + (item.op in RECV_OPS)
    return {i: (phase[i], depth[i]) for i in depth}


def _parallel_waves(plan: Plan) -> dict[int, list] | None:
    """Expensive nodes grouped by depth, when some depth has two or more of them."""
    level = _levels(plan)
    waves: dict[int, list] = {}
    for item in plan.items:
        if _expensive(item) and not item.context:
            waves.setdefault(level[item.index], []).append(item)
    return waves if any(len(w) > 1 for w in waves.values()) else None


def _compile(plan: Plan, traced: bool, pool=None) -> _Compiled:
    """Generates `def step(args, ctx)` with one line per node, kernels bound as globals.

    With a `pool` (a `_Submitter`), the plan runs depth by depth; at a depth with several
    expensive nodes all but the last are submitted and collected (one line each) after the
    rest.
    """
    filename = f"<tensorweave plan {next(_plan_ids)}>"
    ns: dict = {"_rd": deref, "_copy": np.array, "_now": time.perf_counter}
    lines = ["def step(args, ctx):"]
    line_nodes = {}
    copies = _copy_flags(plan)
    rets: dict[int, str] = {}
    items = plan.items
    level = _recv_late_levels(plan) if pool is not None else None
    if level is not None:
        ns["_submit"] = pool
        order = {it.index: k for k, it in enumerate(items)}
        items = sorted(items, key=lambda it: (level[it.index], order[it.index]))
    pending: list = []
    for k, item in enumerate(items):
        code = _node_line(item, ns, copies, rets)
        if code is not None:
            if traced:
                code = _traced_line(item, code)
            elif level is not None:
                code = _maybe_submit(item, code, items, k, level, pending)
            lines.append("    " + code)
            line_nodes[len(lines)] = item.node
        # NOTE: a depth may end on a _Retval (no line of its own): its submitted nodes are
        # still collected here, before the next depth reads them
        if level is not None and _wave_ends(items, k, level):
            for done_item, collect in pending:
                lines.append("    " + collect)
                line_nodes[len(lines)] = done_item.node
            pending.clear()
    lines.append("    return [" + ", ".join(rets[i] for _, i in plan.retvals) + "]")
    exec(compile("\n".join(lines) + "\n", filename, "exec"), ns)  # noqa: S102 - our own code
    return _Compiled(ns["step"], line_nodes, filename)


def _arg_index(item) -> int:
    index = item.attrs.get("index")
    if type(index) is not int or index < 0:
        raise errors.InvalidArgumentError(None, None, f"_Arg node '{item.name}' has index "
                                                      f"{index!r}; expected an int >= 0")
    return index


def _node_line(item, ns, copies, rets) -> str | None:
    i = item.index
    if item.op == "_Arg":
        # NOTE: only integers ever reach the generated source (a graph from the network
        # could otherwise smuggle code in through an attr).
        return f"v{i}_0 = args[{_arg_index(item)}]"
    args = [_input_expr(j, s, d) for (j, s), d in zip(item.inputs, item.deref)]
    if item.op == "_Retval":
        rets[i] = f"_copy({args[0]})" if copies.get(i) else args[0]
        return None
    ns[f"k{i}"] = item.fn
    call = f"k{i}({', '.join((['ctx'] if item.context else []) + args)})"
    n = len(item.output_dtypes)
    if n == 0:
        return call
    if n == 1:
        return f"v{i}_0 = {call}"
    return f"{', '.join(f'v{i}_{k}' for k in range(n))}, = {call}"


def _maybe_submit(item, code, items, k, level, pending) -> str:
    """`v = k(args)` → `_f5 = _submit(k, args)` when another expensive node follows at this
    depth; the collecting line `v = _f5.result()` is queued for the end of the depth."""
    if not _expensive(item) or item.context or "=" not in code:
        return code
    rest = [it for it in items[k + 1:] if level[it.index] == level[item.index]]
    if not any(_expensive(it) for it in rest):
        return code
    target, call = code.split(" = ", 1)
    fn, _, args = call.partition("(")
    pending.append((item, f"{target} = _f{item.index}.result()"))
    return f"_f{item.index} = _submit(ctx, {fn}, {args[:-1]})" if args[:-1] else \
        f"_f{item.index} = _submit(ctx, {fn})"


def _wave_ends(items, k, level) -> bool:
    return k + 1 == len(items) or level[items[k + 1].index] != level[items[k].index]


def _input_expr(j: int, slot: int, is_deref: bool) -> str:
    return f"_rd(v{j}_{slot})" if is_deref else f"v{j}_{slot}"


def _traced_line(item, code: str) -> str:
    outs = [f"v{item.index}_{k}" for k in range(len(item.output_dtypes))]
    rec = f"ctx.stats.record({item.index}, _t, _now(), ({', '.join(outs)}{',' if outs else ''}))"
    return f"_t = _now(); {code}; {rec}"
