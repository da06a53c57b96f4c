"""A partition on an XLA device, run as one compiled executable.

The partition's compute nodes become one jax function of its inputs (`_Arg`s and `_Recv`s),
traced from the nodes' lowerings and `jax.jit`-compiled once per input signature (shapes and
dtypes, plus the values of inputs that feed a compile-time-constant slot such as a Reshape's
shape); a bounded LRU keeps the executables. The host-side nodes run around it: receives
before, with their values moved to the device (`jax.device_put`), sends and retvals after,
with the results brought back as numpy arrays (`np.asarray`).

While tracing, a node whose inputs are all concrete numpy values (constants, shapes) runs
its CPU kernel instead: shape arithmetic folds away and never reaches XLA.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from tensorweave import errors
from tensorweave.runtime.executor import to_op_error
from tensorweave.runtime.kernels.registry import KernelNode, has_kernel, lookup_kernel
from tensorweave.runtime.kernels.xla.backend import jax_device, jax_modules
from tensorweave.runtime.kernels.xla.lower import CONST_INPUTS
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.step import DEAD

IN_OPS = frozenset(["_Arg", "_Recv", "_HostRecv"])
OUT_OPS = frozenset(["_Retval", "_Send", "_HostSend"])
CACHE_SIZE = 16


class XlaExecutable:
    """Runs a partition of an XLA device; same `run(args, ctx)` contract as `Executor`.

    Raises (constructor): UnimplementedError for a partition with control flow.
    """

    def __init__(self, plan: Plan, cache_size: int = CACHE_SIZE):
        if plan.has_control_flow:
            raise errors.UnimplementedError(
                None, None, f"Control flow is not supported on {plan.device}; place it on a CPU")
        self.plan = plan
        self.num_args = len(plan.args)
        self.num_retvals = len(plan.retvals)
        items = plan.items
        self._inputs = [it for it in items if it.op in IN_OPS]
        self._outputs = [it for it in items if it.op in OUT_OPS]
        self._body = [it for it in items if it.op not in IN_OPS and it.op not in OUT_OPS]
        self._static = [any(s in CONST_INPUTS.get(plan.by_index[d].op, ()) for d, s in
                            it.consumers if s >= 0) for it in self._inputs]
        self._folds: dict[int, object] = {}
        self._cache: OrderedDict = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._jax, _, _ = jax_modules()
        self._device = jax_device(plan.device_type)
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
        left = list(range(len(self._outputs)))
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
        """Computes and sends the outputs of `left` whose inputs are all in `have`; returns
        the others."""
        ready = tuple(o for o in left if self._deps[o] <= have.keys())
        if not ready:
            return left
        used = tuple(sorted(set().union(*(self._deps[o] for o in ready))))
        values = [have[k] for k in used]
        static = [self._static[k] for k in used]
        fn = self._executable(ready, used, values, static)
        dynamic = [self._jax.device_put(v, self._device)
                   for v, s in zip(values, static) if not s]
        try:
            outs = fn(*dynamic)
        except errors.OpError:
            raise
        except Exception as e:  # noqa: BLE001 - an XLA runtime failure becomes an OpError
            raise errors.InternalError(None, None,
                                       f"XLA executable on {self.plan.device} failed: {e}") from e
        for o, v in zip(ready, outs):
            it, v = self._outputs[o], np.asarray(v)
            if it.op == "_Retval":
                retvals[it.attrs["index"]] = v
            else:
                it.fn(ctx, v)
        return [o for o in left if o not in ready]

    def _executable(self, ready, used, values, static):
        key = (ready, used) + tuple((v.dtype.str, v.shape, v.tobytes() if s else None)
                                    for v, s in zip(values, static))
        with self._lock:
            fn = self._cache.get(key)
            if fn is not None:
                self._cache.move_to_end(key)
                return fn
        statics = {k: (v if s else None) for k, v, s in zip(used, values, static)}
        fn = self._jax.jit(self._traceable(ready, statics))
        with self._lock:
            self._cache[key] = fn
            self.compiles += 1
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return fn

    def _traceable(self, ready, statics):
        """The jax function of the dynamic inputs among `statics`' keys computing `ready`."""
        needed = self._needed([self._outputs[o] for o in ready])

        def body(*dynamic):
            env: dict[int, tuple] = {}
            it_dyn = iter(dynamic)
            for k, s in statics.items():
                env[self._inputs[k].index] = (s if s is not None else next(it_dyn),)
            for item in self._body:
                if item.index not in needed:
                    continue
                ins = [env[j][slot] for j, slot in item.inputs]
                try:
                    out = self._call(item, ins)
                except Exception as e:  # noqa: BLE001 - a lowering failure names its node
                    raise to_op_error(e, item.node) from None
                env[item.index] = out if isinstance(out, tuple) else (out,)
            return [env[j][slot] for j, slot in (self._outputs[o].inputs[0] for o in ready)]

        return body

    def _needed(self, outputs) -> set[int]:
        """Indices of the body nodes the data inputs of `outputs` depend on."""
        seen: set[int] = set()
        stack = [j for it in outputs for j, _ in it.inputs]
        while stack:
            j = stack.pop()
            if j not in seen:
                seen.add(j)
                stack.extend(i for i, _ in self.plan.by_index[j].inputs)
        return seen

    def _dependencies(self) -> list[frozenset]:
        """For each output: the positions in `_inputs` it depends on (data and control)."""
        pos = {it.index: k for k, it in enumerate(self._inputs)}
        deps: dict[int, frozenset] = {}
        for it in self.plan.items:
            srcs = [j for j, _ in it.inputs] + list(it.control_inputs)
            d = frozenset([pos[it.index]]) if it.index in pos else frozenset()
            deps[it.index] = d.union(*(deps.get(j, frozenset()) for j in srcs))
        return [deps[it.index] for it in self._outputs]

    def _call(self, item, ins):
        if ins and all(isinstance(v, (np.ndarray, np.generic)) for v in ins):
            fold = self._fold(item)
            if fold is not None:
                return fold(*ins)
        return item.fn(*ins)

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
