"""The op-test harness: every registered op type is checked four ways.

Each op family has a `cases_<family>.py` module defining `CASES`, a list of `OpCase`. For a
case the harness builds the op twice — once on constants (static shapes fully known) and once
on placeholders of unknown shape — runs it, and checks:
  1. the kernel's output against the numpy reference (`ref`),
  2. the static shape inferred at construction against the runtime shape,
  3. the static dtype against the runtime dtype,
  4. that every registered op type has at least one case (or a listed reason why not).
Inputs should be non-square so transposed dims are caught.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import tensorweave as tf


@dataclass
class OpCase:
    """`build(*input_tensors)` creates the op (returns a Tensor or list of Tensors);
    `ref(*input_arrays)` computes the expected outputs with numpy."""

    op: str
    build: Callable
    inputs: list
    ref: Callable | None
    rtol: float = 1e-5
    atol: float = 1e-6
    name: str = ""
    placeholders: bool = True         # also build on unknown-shape placeholders
    exact_static_shape: bool = True   # static shape on constants must be fully known
    extra: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}" if self.name else self.op


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def run_case(case: OpCase, use_placeholders: bool) -> None:
    g = tf.Graph()
    with g.as_default():
        if use_placeholders:
            ins = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype), shape=None)
                   for a in case.inputs]
            feed = dict(zip(ins, case.inputs))
        else:
            ins = [tf.constant(a) for a in case.inputs]
            feed = {}
        outs = _as_list(case.build(*ins))
        assert any(o.op.type == case.op for o in outs) or _contains(g, case.op), \
            f"case for {case.op} did not create a {case.op} op"
        with tf.Session(graph=g) as sess:
            got = sess.run(outs, feed)
    want = _as_list(case.ref(*case.inputs)) if case.ref is not None else None
    for i, (o, v) in enumerate(zip(outs, got)):
        v = np.asarray(v)
        assert o.shape.is_compatible_with(v.shape), \
            f"output {i}: static shape {o.shape} vs runtime {v.shape}"
        if not use_placeholders and case.exact_static_shape:
            assert o.shape.is_fully_defined(), f"output {i}: static shape {o.shape} not known"
        assert o.dtype.base_dtype.np_dtype == v.dtype or (
            o.dtype == tf.string and v.dtype.kind in "OS"), \
            f"output {i}: static dtype {o.dtype} vs runtime {v.dtype}"
        if want is not None:
            w = np.asarray(want[i])
            assert v.shape == w.shape, f"output {i}: shape {v.shape} vs reference {w.shape}"
            if v.dtype == object or w.dtype.kind in "USO":
                assert v.tolist() == w.tolist()
            else:
                np.testing.assert_allclose(v, w, rtol=case.rtol, atol=case.atol,
                                           err_msg=f"{case.id} output {i}")


def _contains(g, op_type: str) -> bool:
    return any(op.type == op_type for op in g.get_operations())


def all_cases() -> list[OpCase]:
    import importlib
    import pkgutil

    import tests.ops as pkg

    cases: list[OpCase] = []
    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.startswith("cases_"):
            cases.extend(importlib.import_module(f"tests.ops.{mod.name}").CASES)
    return cases


def all_exempt() -> dict[str, str]:
    """Op types tested elsewhere, each with the test that covers it."""
    import importlib
    import pkgutil

    import tests.ops as pkg

    out: dict[str, str] = {}
    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.startswith("cases_"):
            out.update(getattr(importlib.import_module(f"tests.ops.{mod.name}"), "EXEMPT", {}))
    return out
