"""Every op case of the harness whose op has a lowering runs on /device:XLA_CPU:0 and gives
the numpy kernel's result (same graph, same inputs, all on the CPU).

The inputs are fed through placeholders of the case's static shape (constants would be folded
on the host before placement); soft placement keeps the parts without a lowering on the CPU,
and the test checks that the case's op ran inside an XLA executable.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax", reason="the XLA device needs jax (pip install tensorweave[xla])")

import tensorweave as tf  # noqa: E402
from tensorweave.runtime.kernels.registry import has_kernel, lookup_kernel  # noqa: E402
from tests.ops.harness import all_cases  # noqa: E402

XLA = "/device:XLA_CPU:0"


def _lowered(op: str) -> bool:
    """Whether `op` has a lowering (not the CPU kernel shared for a host-side node)."""
    return has_kernel(op, "XLA_CPU") and \
        lookup_kernel(op, "XLA_CPU").factory is not lookup_kernel(op, "CPU").factory


# NOTE: cases whose numbers legitimately differ on XLA, each with the reason
_SKIP = {
    "NoOp": "no outputs: nothing is compiled (the XLA executable skips it)",
}
# ops compiled only as parts of a while loop (a cond's stay on the CPU): tested in
# tests/runtime/test_xla_loops.py
_LOOP_ONLY = frozenset(["Switch", "Merge"])

# random ops draw other numbers (jax's generator): tests/runtime/test_xla_device.py checks them
_RANDOM = frozenset(["RandomStandardNormal", "RandomUniform", "RandomUniformInt",
                     "TruncatedNormal"])
CASES = [c for c in all_cases() if _lowered(c.op) and c.op not in _RANDOM | _LOOP_ONLY
         and c.id not in _SKIP
         and not any(np.asarray(a).dtype.kind in "OSU" for a in c.inputs)]  # no XLA strings


# one graph per op type: its cases side by side (one compilation per op, not per case)
BY_OP: dict[str, list] = {}
for _c in CASES:
    BY_OP.setdefault(_c.op, []).append(_c)


def _run(cases, device):
    """Each case's outputs, all cases in one graph built under `device`."""
    g = tf.Graph()
    with g.as_default():
        feed, fetches = {}, []
        for case in cases:
            ins = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype), np.shape(a))
                   for a in case.inputs]
            feed.update(zip(ins, case.inputs))
            with tf.device(device):
                outs = case.build(*ins)
            fetches.append(list(outs) if isinstance(outs, (list, tuple)) else [outs])
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            return sess.run(fetches, feed)


@pytest.mark.parametrize("op", sorted(BY_OP))
def test_lowering_matches_numpy_kernel(op, compiled):
    cases = BY_OP[op]
    want = _run(cases, "/cpu:0")
    got = _run(cases, XLA)
    assert op in compiled, f"{op} did not run on {XLA}"
    for case, ws, vs in zip(cases, want, got):
        for i, (w, v) in enumerate(zip(ws, vs)):
            w, v = np.asarray(w), np.asarray(v)
            assert v.dtype == w.dtype and v.shape == w.shape, \
                f"{case.id} output {i}: {v.dtype}{v.shape} vs {w.dtype}{w.shape}"
            # NOTE: the case's tolerance, widened to float32 reassociation (XLA sums in
            # another order and fuses multiply-adds)
            tol = 1e-5 if w.dtype == np.float32 else 0
            np.testing.assert_allclose(v, w, rtol=max(case.rtol, tol),
                                       atol=max(case.atol, tol), err_msg=f"{case.id} output {i}")
