"""CPU kernels for control-flow ops: Switch, Merge, frames, NoOp, ControlTrigger, Assert, Abort.

Deadness, frames and iterations are the dataflow executor's job (`runtime/dataflow.py`): it
runs Merge, Enter, Exit and NextIteration itself. Their kernels here implement the same
value semantics so a plan can bind them, and for direct use in tests.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.runtime.step import DEAD


def _switch(node):
    def run(data, pred):
        if np.ndim(pred) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"The second input must be a scalar, but it has shape "
                            f"{list(np.shape(pred))}")
        return (DEAD, data) if pred else (data, DEAD)

    return run


def _merge(node):
    def run(*inputs):
        for k, v in enumerate(inputs):
            if v is not DEAD:
                return v, np.int32(k)
        return DEAD, DEAD

    return run


def _forward(node):
    return _identity


def _identity(x):
    return x


def _nothing(node):
    return _none


def _none():
    return None


for _op in ("Switch", "RefSwitch"):
    register_kernel(_op, forwards_input=True)(_switch)
for _op in ("Merge", "RefMerge"):
    register_kernel(_op, forwards_input=True)(_merge)
for _op in ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration",
            "LoopCond"):
    register_kernel(_op, forwards_input=True)(_forward)
for _op in ("NoOp", "ControlTrigger"):
    register_kernel(_op)(_nothing)


@register_kernel("Abort")
def _abort(node):
    msg = node.attr("error_msg", "")
    quiet = bool(node.attr("exit_without_error", False))

    def run():
        # NOTE: TF kills the process; we end the program only when asked to exit without an
        # error (SystemExit is not an Exception, so it is not turned into an OpError) and
        # otherwise fail the step, which is what a user can act on.
        if quiet:
            raise SystemExit(0)
        raise errors.AbortedError(None, None, f"Abort_op intentional failure; {msg}")

    return run


@register_kernel("Assert")
def _assert(node):
    summarize = int(node.attr("summarize", 3))

    def run(condition, *data):
        if np.ndim(condition) != 0 and np.size(condition) != 1:
            raise errors.InvalidArgumentError(
                None, None, f"In[0] should be a scalar: {list(np.shape(condition))}")
        if bool(np.reshape(condition, ())):
            return None
        parts = " ".join(f"[{summarize_value(d, summarize)}]" for d in data)
        raise errors.InvalidArgumentError(None, None, f"assertion failed: {parts}")

    return run


def summarize_value(value, max_entries: int) -> str:
    """TF's Tensor::SummarizeValue: up to `max_entries` elements, one bracket pair per row."""
    arr = np.asarray(value)
    flat = arr.reshape(-1)
    limit = flat.size if max_entries < 0 else min(max_entries, flat.size)
    if arr.ndim == 0:
        text = " ".join(fmt_scalar(v) for v in flat[:limit])
    else:
        out: list[str] = []
        _print_dim(0, arr.shape, limit, flat, [0], out)
        text = "".join(out)
    return text + ("..." if flat.size > limit else "")


def _print_dim(dim, shape, limit, flat, pos, out) -> None:
    """TF's PrintOneDim: rows in brackets; "..." where the limit cuts a row."""
    if pos[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if pos[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i:
                out.append(" ")
            out.append(fmt_scalar(flat[pos[0]]))
            pos[0] += 1
        return
    for _ in range(shape[dim]):
        opened = pos[0] < limit
        if opened:
            out.append("[")
        _print_dim(dim + 1, shape, limit, flat, pos, out)
        if opened:
            out.append("]")


_C_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
              ord("'"): "\\'", ord("\\"): "\\\\"}


def c_escape(data: bytes) -> str:
    """TF's absl::CEscape: quotes, backslashes and \\n\\r\\t escaped, other unprintable
    bytes as octal."""
    return "".join(_C_ESCAPES.get(b) or (chr(b) if 32 <= b < 127 else f"\\{b:03o}")
                   for b in data)


def fmt_scalar(v) -> str:
    if isinstance(v, (bytes, np.bytes_)):
        return c_escape(bytes(v))
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        if v == 0 or 1e-4 <= abs(v) < 1e16 or not np.isfinite(v):
            return np.format_float_positional(v, trim="-")
        return np.format_float_scientific(v, trim="-")
    return str(v)
