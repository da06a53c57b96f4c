"""A partition on an XLA device, run as one compiled executable.

The partition's compute nodes become one jax function of its inputs (`_Arg`s and `_Recv`s),
traced from the nodes' lowerings and `jax.jit`-compiled once per input signature (shapes and
dtypes, plus the values of inputs that feed a compile-time-constant slot such as a Reshape's
shape); a bounded LRU keeps the executables. The host-side nodes run around it: receives
before, with their values moved to the device (`jax.device_put`), sends and retvals after,
with the results brought back as numpy arrays (`np.asarray`).

While tracing, a node whose inputs are all concrete numpy values (constants, shapes) runs
its CPU kernel instead: shape arithmetic folds away and never reaches XLA.

State: the variables the partition's nodes use are inputs of the compiled function (their
device arrays, donated) and outputs (their values after the step), stored back into their
`Ref`s under the Refs' locks; nodes that update a variable (`lower.STATE_WRITERS`) run once
per step, in the first stage whose inputs are in, even when no output consumes them. Random
ops get a per-(session, node) step counter as a traced input.

API for other runners (the auto-clustering runner builds on it): `XlaExecutable(plan)` then
`run(args, ctx) -> retvals` per step, as `Executor`; `compiles` counts the compilations.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict

import numpy as np

from tensorweave import errors
from tensorweave.runtime.executor import to_op_error
from tensorweave.runtime.kernels.registry import KernelNode, has_kernel, lookup_kernel
from tensorweave.runtime.kernels.xla.backend import jax_device, jax_modules
from tensorweave.runtime.kernels.xla.lower import (
    CONST_INPUTS,
    COUNTER_OPS,
    STATE_WRITERS,
    VarState,
)
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.step import DEAD
from tensorweave.runtime.xla_control_flow import Structure, salted

IN_OPS = frozenset(["_Arg", "_Recv", "_HostRecv"])
OUT_OPS = frozenset(["_Retval", "_Send", "_HostSend"])
VARIABLE_OPS = frozenset(["VariableV2", "Variable"])
CACHE_SIZE = 16
_LOG = logging.getLogger("tensorweave")
_COUNTERS = "__xla_random_counters"


class _Counter:
    """A random node's step counter (one per session and node, shared by its plans)."""

    __slots__ = ("n", "lock")

    def __init__(self):
        self.n = 0
        self.lock = threading.Lock()

    def take(self) -> np.uint32:
        with self.lock:
            n, self.n = self.n, self.n + 1
        return np.uint32(n & 0xFFFFFFFF)


class _Stage:
    """The sinks one `_emit` runs together and what they read: the positions in `_inputs`
    they use (and which are compile-time constants), the variables, the random counters."""

    __slots__ = ("ready", "used", "static", "refs", "counter_nodes", "counters", "outputs")

    def __init__(self, ready, used, static, refs, counter_nodes, counters, outputs):
        self.ready, self.used, self.static, self.refs = ready, used, static, refs
        self.counter_nodes, self.counters, self.outputs = counter_nodes, counters, outputs


class _Compiled:
    """One jitted stage: `fn`, and what its trace found constant (output position → value,
    variable position → value after the step)."""

    __slots__ = ("fn", "const_outs", "const_state")

    def __init__(self):
        self.fn = None
        self.const_outs: dict[int, np.ndarray] = {}
        self.const_state: dict[int, np.ndarray] = {}


class XlaExecutable:
    """Runs a partition of an XLA device; same `run(args, ctx)` contract as `Executor`.

    Raises (constructor): UnimplementedError for a partition with control flow.
    """

    def __init__(self, plan: Plan, cache_size: int = CACHE_SIZE):
        self.plan = plan
        self.num_args = len(plan.args)
        self.num_retvals = len(plan.retvals)
        items = plan.items
        self._inputs = [it for it in items if it.op in IN_OPS]
        self._outputs = [it for it in items if it.op in OUT_OPS]
        self._body = [it for it in items if it.op not in IN_OPS and it.op not in OUT_OPS]
        # NOTE: `plan.has_control_flow` is also set for a partition fed by one with control
        # flow; only while loops are compiled (a cond raises UnimplementedError here)
        self._flow = Structure(self._body, plan.by_index) if any(
            it.op_def.traits.control_flow for it in self._body) else None
        # sinks: the outputs, then the nodes that update a variable (run once per step)
        self._sinks = self._outputs + [it for it in self._body if it.op in STATE_WRITERS]
        self._refs = {it.index: _ref_of(it) for it in self._body if it.op in VARIABLE_OPS}
        self._counters = {it.index: self._counter(it) for it in self._body
                          if it.op in COUNTER_OPS}
        self._static = [any(_const_slot(plan.by_index[d], s) for d, s in it.consumers)
                        for it in self._inputs]
        self._folds: dict[int, object] = {}
        self._stages: dict[tuple, _Stage] = {}
        self._cache: OrderedDict = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._jax, _, _ = jax_modules()
        self._device = jax_device(plan.device_type)
        # NOTE: jit puts host arguments on jax's default device itself, cheaper than a
        # device_put per array (~140 µs each on the 2-core machine against ~35 µs a call)
        self._host_args = self._device == self._jax.devices()[0]
        self.compiles = 0
        self._deps = self._dependencies()

    def run(self, args: list, ctx) -> list:
        """One step. Outputs go out as soon as the inputs they need are in: a send another
        partition needs before it can send this one more is not held back (no deadlock when
        soft placement splits a chain CPU → XLA → CPU → XLA)."""
        have: dict[int, np.ndarray] = {}
        waiting = []
        for k, it in enumerate(self._inputs):
            if it.op == "_Arg":
                have[k] = np.asarray(args[it.attrs["index"]])
            else:
                waiting.append(k)
        retvals = [None] * self.num_retvals
        left = list(range(len(self._sinks)))
        left = self._emit(have, left, retvals, ctx)
        while waiting:
            keys = [self._inputs[k].fn.key_for(ctx) for k in waiting]
            k = waiting.pop(ctx.rendezvous.wait_any(keys, ctx.deadline) if len(keys) > 1 else 0)
            value = self._inputs[k].fn(ctx)
            if value is DEAD:
                raise errors.UnimplementedError(
                    None, None, f"A dead tensor (from an untaken branch) reached "
                                f"{self.plan.device}")
            have[k] = np.asarray(value)
            left = self._emit(have, left, retvals, ctx)
        return retvals

    def _emit(self, have, left, retvals, ctx) -> list[int]:
        """Runs the sinks of `left` whose inputs are all in `have` (computes and sends those
        outputs, applies those updates); returns the others."""
        ready = tuple(o for o in left if self._deps[o] <= have.keys())
        if not ready:
            return left
        stage = self._stages.get(ready) or self._stage(ready)
        values = [have[k] for k in stage.used]
        refs = stage.refs
        with _locked(refs):
            state = [r.value for r in refs]
            exe = self._executable(stage, values, state)
            dynamic = [self._to_device(v) for v, s in zip(values, stage.static) if not s]
            steps = [c.take() for c in stage.counters]
            on_device = [self._to_device(v) for v in state if v is not None]
            try:
                traced, new_state = exe.fn(dynamic, steps, on_device)
            except errors.OpError:
                raise
            except Exception as e:  # noqa: BLE001 - an XLA runtime failure becomes an OpError
                raise errors.InternalError(
                    None, None, f"XLA executable on {self.plan.device} failed: {e}") from e
            for k, v in new_state.items():
                refs[k].value = v
            for k, v in exe.const_state.items():
                refs[k].value = np.array(v)  # NOTE: a fresh buffer: the next step donates it
        it_traced = iter(traced)
        for pos, o in enumerate(stage.outputs):
            it = self._outputs[o]
            v = exe.const_outs[pos] if pos in exe.const_outs else next(it_traced)
            v = np.array(v)  # NOTE: a copy: never a donated buffer
            if it.op == "_Retval":
                retvals[it.attrs["index"]] = v
            else:
                it.fn(ctx, v)
        return [o for o in left if o not in ready]

    def _stage(self, ready) -> _Stage:
        """What the sinks `ready` compute from (built once per set of ready sinks)."""
        used = tuple(sorted(set().union(*(self._deps[o] for o in ready))))
        needed = self._needed([self._sinks[o] for o in ready])
        refs = list({id(r): r for i, r in self._refs.items() if i in needed}.values())
        counters = [i for i in self._counters if i in needed]
        stage = _Stage(ready, used, [self._static[k] for k in used], refs, counters,
                       [self._counters[i] for i in counters],
                       [o for o in ready if o < len(self._outputs)])
        self._stages[ready] = stage
        return stage

    def _to_device(self, value):
        """`value` as the executable takes it: host arrays as they are where the device is
        jax's default (jit reads them in place), else put there; device arrays as they are."""
        if self._host_args or isinstance(value, self._jax.Array):
            return value
        return self._jax.device_put(value, self._device)

    def _executable(self, stage, values, state) -> _Compiled:
        key = (stage.ready,) + tuple((v.dtype, v.shape, v.tobytes() if s else None)
                                     for v, s in zip(values, stage.static)) + tuple(
            None if v is None else (v.dtype, tuple(v.shape)) for v in state)
        with self._lock:
            exe = self._cache.get(key)
            if exe is not None:
                self._cache.move_to_end(key)
                return exe
        statics = {k: (v if s else None) for k, v, s in zip(stage.used, values, stage.static)}
        exe = _Compiled()
        exe.fn = self._jax.jit(self._traceable(stage, statics, [v is not None for v in state],
                                               exe), donate_argnums=(2,))
        with self._lock:
            self._cache[key] = exe
            self.compiles += 1
            if self.compiles > 1:
                _LOG.info("XLA: compiling a partition of %s again (%d compilations; inputs %s)",
                          self.plan.device, self.compiles,
                          [(v.dtype.name, v.shape) for v in values])
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return exe

    def _traceable(self, stage, statics, initialized, exe):
        """The jax function `(dynamic inputs, counters, variable values) -> (outputs, {ref
        position: value after})` computing the sinks of `stage`. Outputs and variable values
        known while tracing (constants, folded on the CPU kernels) are left out of it: they
        go to `exe.const_outs` / `exe.const_state`, set on the host each run (an initializer
        of zeros compiles no fill kernel and embeds no literal)."""
        needed = self._needed([self._sinks[o] for o in stage.ready])
        run_now = {self._sinks[o].index for o in stage.ready}
        outputs = [self._outputs[o] for o in stage.outputs]
        refs = stage.refs
        pos = {id(r): k for k, r in enumerate(refs)}
        counters = stage.counter_nodes

        def body(dynamic, steps, on_device):
            it_dyn, it_var = iter(dynamic), iter(on_device)
            states = [VarState(r, next(it_var) if init else None)
                      for r, init in zip(refs, initialized)]
            step_of = dict(zip(counters, steps))
            env: dict[int, tuple] = {}
            for k, s in statics.items():
                env[self._inputs[k].index] = (s if s is not None else next(it_dyn),)
            def run(item, iterations=()):
                if item.index in self._refs:
                    env[item.index] = (states[pos[id(self._refs[item.index])]],)
                    return
                ins = [env[j][slot] for j, slot in item.inputs]
                if item.op in STATE_WRITERS and item.index not in run_now:
                    env[item.index] = (ins[0],)  # NOTE: applied in an earlier stage
                    return
                try:
                    ins = [v.read() if d and isinstance(v, VarState) else v
                           for v, d in zip(ins, item.deref)]
                    if item.index in step_of:
                        ins.insert(0, salted(step_of[item.index], iterations)
                                   if iterations else step_of[item.index])
                    out = self._call(item, ins)
                except Exception as e:  # noqa: BLE001 - a lowering failure names its node
                    raise to_op_error(e, item.node) from None
                env[item.index] = out if isinstance(out, tuple) else (out,)

            if self._flow is not None:
                try:
                    self._flow.run(needed, env, run)
                except errors.OpError:
                    raise
                except Exception as e:  # noqa: BLE001 - jax's complaint about a loop
                    raise errors.InternalError(
                        None, None, f"XLA: a while loop on {self.plan.device} failed to "
                                    f"compile: {e}") from e
            else:
                for item in self._body:
                    if item.index in needed:
                        run(item)
            outs = []
            for k, it in enumerate(outputs):
                v = env[it.inputs[0][0]][it.inputs[0][1]]
                v = v.read() if isinstance(v, VarState) else v
                if _concrete(v):
                    exe.const_outs[k] = np.asarray(v)
                else:
                    outs.append(v)
            new_state = {}
            for k, st in enumerate(states):
                if st.value is None:
                    continue
                if _concrete(st.value):
                    exe.const_state[k] = np.asarray(st.value)
                else:
                    new_state[k] = st.value
            return outs, new_state

        return body

    def _needed(self, sinks) -> set[int]:
        """Indices of the body nodes `sinks` need: the update nodes among them and what they
        and the outputs' data inputs depend on."""
        seen: set[int] = set()
        stack = [j for it in sinks for j, _ in it.inputs]
        stack += [it.index for it in sinks if it.op not in OUT_OPS]
        while stack:
            j = stack.pop()
            if j not in seen:
                seen.add(j)
                stack.extend(i for i, _ in self.plan.by_index[j].inputs)
        return seen if self._flow is None else self._flow.close(seen)

    def _dependencies(self) -> list[frozenset]:
        """For each output: the positions in `_inputs` it depends on (data and control)."""
        pos = {it.index: k for k, it in enumerate(self._inputs)}
        deps: dict[int, frozenset] = {}
        for it in self.plan.items:
            srcs = [j for j, _ in it.inputs] + list(it.control_inputs)
            d = frozenset([pos[it.index]]) if it.index in pos else frozenset()
            deps[it.index] = d.union(*(deps.get(j, frozenset()) for j in srcs))
        if self._flow is None:
            return [deps[it.index] for it in self._sinks]
        # NOTE: a loop's back edges and stacks hide dependencies from the walk above: a sink
        # also waits for every input of the whole loops it needs
        return [deps[it.index] | {pos[j] for j in self._needed([it]) if j in pos}
                for it in self._sinks]

    def _call(self, item, ins):
        if ins and all(isinstance(v, (np.ndarray, np.generic)) for v in ins):
            fold = self._fold(item)
            if fold is not None:
                return fold(*ins)
        return item.fn(*ins)

    def _counter(self, item) -> _Counter:
        if self.plan.resources is None:
            return _Counter()
        return self.plan.resources.lookup_or_create(_COUNTERS, item.name, _Counter)

    def _fold(self, item):
        """The CPU kernel of a stateless node (None when it has none or is stateful)."""
        if item.index not in self._folds:
            fold = None
            if not item.op_def.is_stateful and has_kernel(item.op, "CPU"):
                kdef = lookup_kernel(item.op, "CPU")
                if not kdef.context:
                    srcs = [self.plan.by_index[j].output_dtypes[s] for j, s in item.inputs]
                    fold = kdef.factory(KernelNode(
                        item.name, item.op, item.attrs, srcs, item.output_dtypes,
                        self.plan.device, None, item.op_def, {}))
            self._folds[item.index] = fold
        return self._folds[item.index]


def _concrete(value) -> bool:
    """Whether a value in a trace is known (numpy, from constants folded on the host)."""
    return isinstance(value, (np.ndarray, np.generic))


def _const_slot(item, slot: int) -> bool:
    """Whether input `slot` of `item` must be a compile-time constant (a negative position
    in CONST_INPUTS counts from the end: ConcatV2's axis)."""
    consts = CONST_INPUTS.get(item.op, ())
    return slot >= 0 and (slot in consts or slot - len(item.inputs) in consts)


def _ref_of(item):
    """A variable node's `Ref` (its kernel, shared with the CPU, looks it up at plan build)."""
    return item.fn()


@contextlib.contextmanager
def _locked(refs):
    """Holds the locks of `refs` (in a fixed order: no deadlock between partitions)."""
    with contextlib.ExitStack() as stack:
        for r in sorted(refs, key=id):
            stack.enter_context(r.lock)
        yield
