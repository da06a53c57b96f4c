"""CPU kernels for StringFormat and PrintV2 (ops/logging_ops.py)."""

from __future__ import annotations

import logging
import sys
import threading

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.cpu.control_flow import fmt_scalar
from tensorweave.runtime.kernels.registry import register_kernel

_FILE_LOCK = threading.Lock()


def _item(v, quoted: bool) -> str:
    if isinstance(v, (bytes, np.bytes_, str)):
        text = v.decode("utf-8", "replace") if isinstance(v, (bytes, np.bytes_)) else v
        return f'"{text}"' if quoted else text
    return fmt_scalar(v)


def summarize_v2(value, summarize: int) -> str:
    """numpy-style text of `value`: nested brackets, rows on new lines, and only the first
    and last `summarize` entries of a longer dimension around "..." (-1: all)."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return _item(arr.item() if arr.dtype != object else arr[()], quoted=True)
    return _dims(arr, summarize, 0)


def _dims(arr, n: int, depth: int) -> str:
    size = arr.shape[0]
    cut = 0 <= n and 2 * n < size
    picks = list(range(n)) + [None] + list(range(size - n, size)) if cut else range(size)
    if arr.ndim == 1:
        items = ["..." if i is None else _item(arr[i], quoted=True) for i in picks]
        return "[" + " ".join(items) + "]"
    sep = "\n" * (arr.ndim - 1) + " " * (depth + 1)
    items = ["..." if i is None else _dims(arr[i], n, depth + 1) for i in picks]
    return "[" + sep.join(items) + "]"


@register_kernel("StringFormat")
def _string_format(node):
    template, placeholder = node.attr("template"), node.attr("placeholder")
    summarize = int(node.attr("summarize"))
    pieces = template.split(placeholder)

    def run(*inputs):
        if len(inputs) != len(pieces) - 1:
            raise invalid(f"num placeholders in template and num inputs must match: "
                          f"{len(pieces) - 1} vs. {len(inputs)}")
        out = [pieces[0]]
        for x, piece in zip(inputs, pieces[1:]):
            out += [summarize_v2(x, summarize), piece]
        return np.array("".join(out).encode("utf-8"), dtype=object)

    return run


def _writer(stream: str):
    if stream == "stdout":
        return lambda text: (sys.stdout.write(text), sys.stdout.flush())
    if stream == "stderr":
        return lambda text: (sys.stderr.write(text), sys.stderr.flush())
    if stream.startswith("log(") and stream.endswith(")"):
        level = {"info": logging.INFO, "warning": logging.WARNING,
                 "error": logging.ERROR}.get(stream[4:-1])
        if level is None:
            raise invalid(f"{stream} is not a valid output stream")
        return lambda text: logging.getLogger("tensorweave").log(level, text.rstrip("\n"))
    if stream.startswith("file://"):
        path = stream[len("file://"):]

        def write(text):
            with _FILE_LOCK, open(path, "a", encoding="utf-8") as f:
                f.write(text)

        return write
    raise invalid(f"{stream} is not a valid output stream")


@register_kernel("PrintV2")
def _print_v2(node):
    write, end = _writer(node.attr("output_stream")), node.attr("end")

    def run(text):
        if np.ndim(text) != 0:
            raise invalid(f"Input is expected to be scalar, but got {list(np.shape(text))}")
        value = np.asarray(text, dtype=object).item()
        write((value.decode("utf-8", "replace") if isinstance(value, bytes) else value) + end)

    return run
