"""CPU kernels for the string ops (ops/string_ops.py). Strings are bytes in object arrays."""

from __future__ import annotations

import re

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.registry import register_kernel

_WHITESPACE = b" \t\n\v\f\r"


def _obj(x) -> np.ndarray:
    arr = np.asarray(x, dtype=object)
    return arr


def _bytes(v) -> bytes:
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _as_sparse(tokens: list[list[bytes]]):
    indices = [(i, j) for i, row in enumerate(tokens) for j in range(len(row))]
    values = [t for row in tokens for t in row]
    width = max((len(row) for row in tokens), default=0)
    return (np.array(indices, np.int64).reshape(-1, 2), np.array(values, dtype=object),
            np.array([len(tokens), width], np.int64))


def _check_vector(x):
    arr = _obj(x)
    if arr.ndim != 1:
        raise invalid(f"input must be a vector, got shape: {list(arr.shape)}")
    return arr


@register_kernel("StringSplit")
def _string_split(node):
    skip_empty = bool(node.attr("skip_empty"))

    def run(source, delimiter):
        source, delim = _check_vector(source), _bytes(_obj(delimiter).item())
        rows = []
        for s in source.tolist():
            s = _bytes(s)
            if not s:  # NOTE: TF yields no token for an empty string, even kept empties
                parts = []
            elif not delim:
                parts = [s[i:i + 1] for i in range(len(s))]
            else:
                parts = re.split(b"[" + re.escape(delim) + b"]", s)
            rows.append([p for p in parts if p or not skip_empty])
        return _as_sparse(rows)

    return run


@register_kernel("StringSplitV2")
def _string_split_v2(node):
    maxsplit = int(node.attr("maxsplit"))

    def run(source, sep):
        source, sep = _check_vector(source), _bytes(_obj(sep).item())
        rows = []
        for s in source.tolist():
            s = _bytes(s)
            if sep:
                rows.append(s.split(sep, maxsplit))
            else:
                rows.append(s.split(None, maxsplit))
        return _as_sparse(rows)

    return run


def _char_starts(s: bytes) -> list[int]:
    """Where TF's UTF8_CHAR unit sees characters begin: every byte that is not a UTF-8
    continuation byte (0b10xxxxxx), so invalid bytes count one character each."""
    return [i for i, b in enumerate(s) if b & 0xC0 != 0x80]


def _utf8_slice(s: bytes, pos: int, length: int, index) -> bytes:
    starts = _char_starts(s)
    n = len(starts)
    start = pos + n if pos < 0 else pos
    if not 0 <= start <= n:
        raise invalid(f"pos {pos} out of range for string at index {index}")
    end = min(start + max(length, 0), n)
    bounds = starts + [len(s)]
    return s[bounds[start]:bounds[end]]


@register_kernel("Substr")
def _substr(node):
    utf8 = node.attr("unit") == "UTF8_CHAR"

    def run(text, pos, length):
        text, pos, length = _obj(text), np.asarray(pos), np.asarray(length)
        if pos.shape != length.shape:
            raise invalid(f"pos and len should have the same shape, got: "
                          f"{list(pos.shape)} vs. {list(length.shape)}")
        t, p, ln = np.broadcast_arrays(text, pos, length)
        out = np.empty(t.shape, dtype=object)
        for index in np.ndindex(t.shape):
            s, start, count = _bytes(t[index]), int(p[index]), int(ln[index])
            if utf8:
                out[index] = _utf8_slice(s, start, count, index)
                continue
            begin = start + len(s) if start < 0 else start
            if not 0 <= begin <= len(s):
                raise invalid(f"pos {start} out of range for string b'{s.decode('latin-1')}' "
                              f"at index {list(index)[0] if index else 0}")
            out[index] = s[begin:begin + max(count, 0)]
        return out

    return run


def _compile(pattern):
    pattern = _bytes(pattern)
    try:
        return re.compile(pattern)
    except re.error as e:
        raise invalid(f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: "
                      f"{e}") from None


def _python_rewrite(rewrite: bytes) -> bytes:
    r"""RE2's rewrite (\0..\9 groups, \\ a backslash) in Python's template syntax."""
    return re.sub(rb"\\(\d)", lambda m: b"\\g<" + m.group(1) + b">", rewrite)


def _replace(values, regex, rewrite: bytes, replace_global: bool):
    template = _python_rewrite(rewrite)
    arr = _obj(values)
    out = np.empty(arr.shape, dtype=object)
    for index in np.ndindex(arr.shape):
        out[index] = regex.sub(template, _bytes(arr[index]), count=0 if replace_global else 1)
    return out


@register_kernel("RegexReplace")
def _regex_replace(node):
    replace_global = bool(node.attr("replace_global"))

    def run(values, pattern, rewrite):
        return _replace(values, _compile(_obj(pattern).item()), _bytes(_obj(rewrite).item()),
                        replace_global)

    return run


@register_kernel("StaticRegexReplace")
def _static_regex_replace(node):
    regex = _compile(node.attr("pattern"))
    rewrite, replace_global = _bytes(node.attr("rewrite")), bool(node.attr("replace_global"))
    return lambda values: _replace(values, regex, rewrite, replace_global)


def _full_match(values, regex):
    arr = _obj(values)
    out = np.zeros(arr.shape, bool)
    for index in np.ndindex(arr.shape):
        out[index] = regex.fullmatch(_bytes(arr[index])) is not None
    return out


@register_kernel("RegexFullMatch")
def _regex_full_match(node):
    return lambda values, pattern: _full_match(values, _compile(_obj(pattern).item()))


@register_kernel("StaticRegexFullMatch")
def _static_regex_full_match(node):
    regex = _compile(node.attr("pattern"))
    return lambda values: _full_match(values, regex)


@register_kernel("ReduceJoin")
def _reduce_join(node):
    keep_dims, sep = bool(node.attr("keep_dims")), _bytes(node.attr("separator"))

    def run(inputs, axes):
        arr = _obj(inputs)
        axes = [int(a) for a in np.asarray(axes).reshape(-1)]
        for a in axes:
            if not -arr.ndim <= a < arr.ndim:
                raise invalid(f"Invalid reduction dimension {a} for input with {arr.ndim} "
                              f"dimensions.")
        picked = sorted({a % arr.ndim for a in axes}) if arr.ndim else []
        if len(picked) != len(axes):
            raise invalid(f"Duplicate reduction dimension {axes}")
        kept = [d for d in range(arr.ndim) if d not in picked]
        moved = np.transpose(arr, kept + picked) if arr.ndim else arr
        outer = moved.shape[:len(kept)]
        flat = moved.reshape(outer + (-1,))
        out = np.empty(outer, dtype=object)
        for index in np.ndindex(outer):
            out[index] = sep.join(_bytes(v) for v in flat[index])
        if keep_dims:
            out = out.reshape([1 if d in picked else arr.shape[d] for d in range(arr.ndim)])
        return out

    return run


def _format_number(v, spec: str, dtype) -> bytes:
    if dtype.kind == "b":
        return b"true" if v else b"false"
    if dtype.kind == "c":
        return f"({spec % v.real},{spec % v.imag})".encode()
    return (spec % v).encode()


@register_kernel("AsString")
def _as_string(node):
    precision, width = int(node.attr("precision")), int(node.attr("width"))
    scientific, shortest = bool(node.attr("scientific")), bool(node.attr("shortest"))
    fill = node.attr("fill") or ""
    if len(fill) > 1:
        raise invalid(f"Fill string must be one or fewer characters: {fill}")
    if scientific and shortest:
        raise invalid("Cannot select both scientific and shortest notation")

    def spec_for(dtype) -> str:
        flags = "0" if fill == "0" else ("-" if fill == "-" else "")
        w = str(width) if width > -1 else ""
        if dtype.kind in "iub":
            return f"%{flags}{w}d"
        prec = f".{precision}" if precision > -1 else ""
        return f"%{flags}{w}{prec}{'e' if scientific else 'g' if shortest else 'f'}"

    def run(x):
        arr = np.asarray(x)
        if arr.dtype == object:
            return arr
        spec = spec_for(arr.dtype)
        out = np.empty(arr.shape, dtype=object)
        for index in np.ndindex(arr.shape):
            text = _format_number(arr[index], spec, arr.dtype)
            if fill not in ("", "0", "-") and width > len(text):
                text = fill.encode() * (width - len(text)) + text
            out[index] = text
        return out

    return run


def _map(fn):
    def run(x):
        arr = _obj(x)
        out = np.empty(arr.shape, dtype=object)
        for index in np.ndindex(arr.shape):
            out[index] = fn(_bytes(arr[index]))
        return out

    return run


@register_kernel("StringLength")
def _string_length(node):
    utf8 = node.attr("unit") == "UTF8_CHAR"

    def run(x):
        arr = _obj(x)
        out = np.zeros(arr.shape, np.int32)
        for index in np.ndindex(arr.shape):
            s = _bytes(arr[index])
            out[index] = len(_char_starts(s)) if utf8 else len(s)
        return out

    return run


register_kernel("StringStrip")(lambda node: _map(lambda s: s.strip(_WHITESPACE)))
register_kernel("StringUpper")(lambda node: _map(lambda s: s.upper()))
register_kernel("StringLower")(lambda node: _map(lambda s: s.lower()))
