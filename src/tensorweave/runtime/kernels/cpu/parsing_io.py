"""CPU kernels for the byte/string/file parsing ops: `DecodeRaw`, `DecodeCSV`, `ReadFile`,
`WriteFile`, `StringToNumber`, `DecodeBase64`, `EncodeBase64`. Errors use TF's messages
(InvalidArgumentError naming the field and record; NotFoundError for a missing file).
"""

from __future__ import annotations

import base64
import binascii
import os

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.registry import register_kernel


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def _bytes(v) -> bytes:
    return v.encode() if isinstance(v, str) else bytes(v)


def _string_array(items, shape) -> np.ndarray:
    out = np.empty(len(items), object)
    out[:] = items
    return out.reshape(shape)


# -- DecodeRaw -------------------------------------------------------------------------------
@register_kernel("DecodeRaw")
def _decode_raw(node):
    out_dt = node.attr("out_type")
    np_out = out_dt.np_dtype
    size = np.dtype(np_out).itemsize
    wire = np.dtype(np.uint8) if out_dt == dtypes.bool_ else \
        np.dtype(np_out).newbyteorder("<" if node.attr("little_endian") else ">")

    def run(x):
        x = np.asarray(x, dtype=object)
        flat = [_bytes(v) for v in x.reshape(-1).tolist()]
        if not flat:
            return np.zeros(x.shape + (0,), np_out)
        length = len(flat[0])
        for i, v in enumerate(flat):
            if len(v) != length:
                raise _invalid(f"DecodeRaw requires input strings to all be the same size, "
                               f"but element {i} has size {len(v)} != {length}")
        if length % size:
            raise _invalid(f"Input to DecodeRaw has length {length} that is not a multiple "
                           f"of {size}, the size of {_c_name(out_dt)}")
        data = np.frombuffer(b"".join(flat), wire)
        data = data != 0 if out_dt == dtypes.bool_ else data.astype(np_out)
        return data.reshape(x.shape + (length // size,))

    return run


def _c_name(dt) -> str:
    return {"float32": "float", "float64": "double"}.get(dt.name, dt.name)


# -- DecodeCSV -------------------------------------------------------------------------------
_CONVERTERS = {
    dtypes.float32: (float, np.float32, "float"),
    dtypes.float64: (float, np.float64, "double"),
    dtypes.int32: (int, np.int32, "int32"),
    dtypes.int64: (int, np.int64, "int64"),
}


@register_kernel("DecodeCSV")
def _decode_csv(node):
    types = [dtypes.as_dtype(t).base_dtype for t in node.attr("OUT_TYPE")]
    delim = node.attr("field_delim").encode()
    if len(delim) != 1:
        raise _invalid("field_delim should be only 1 char")
    quote = node.attr("use_quote_delim")
    na = node.attr("na_value").encode()
    select = list(node.attr("select_cols") or [])

    def run(records, *record_defaults):
        records = np.asarray(records, dtype=object)
        defaults = [_csv_default(d, t, j) for j, (d, t) in
                    enumerate(zip(record_defaults, types))]
        cols: list[list] = [[] for _ in types]
        for i, rec in enumerate(records.reshape(-1).tolist()):
            fields = _split(_bytes(rec), delim, quote)
            fields = _select(fields, select, len(types), i)
            for j, (f, t, d) in enumerate(zip(fields, types, defaults)):
                cols[j].append(_csv_value(f, t, d, na, j, i))
        return _outputs(cols, types, records.shape)

    return run


def _csv_default(d, t, j):
    d = np.asarray(d)
    if d.size > 1:
        raise _invalid(f"record_defaults[{j}] must have at most one value")
    if not d.size:
        return None
    return _bytes(d.reshape(-1)[0]) if t == dtypes.string else d.reshape(-1)[0]


def _select(fields: list, select: list, n: int, i: int) -> list:
    if select:
        if select[-1] >= len(fields):
            raise _invalid(f"Expect {select[-1] + 1} fields but have {len(fields)} in record "
                           f"{i}")
        return [fields[c] for c in select]
    if len(fields) != n:
        raise _invalid(f"Expect {n} fields but have {len(fields)} in record {i}")
    return fields


def _split(rec: bytes, delim: bytes, quote: bool) -> list:
    """RFC 4180 fields of one record (quotes handled only when `quote`)."""
    if not quote or b'"' not in rec:
        fields = rec.split(delim)
        if b"\n" in rec or b"\r" in rec:
            raise _invalid("Unquoted fields cannot have quotes/CRLFs inside")
        return fields
    fields, pos, n = [], 0, len(rec)
    while True:
        if pos < n and rec[pos] == 0x22:
            field, pos = _quoted(rec, pos + 1, delim)
        else:
            end = rec.find(delim, pos)
            end = n if end < 0 else end
            field = rec[pos:end]
            if b'"' in field or b"\n" in field or b"\r" in field:
                raise _invalid("Unquoted fields cannot have quotes/CRLFs inside")
            pos = end
        fields.append(field)
        if pos >= n:
            return fields
        pos += 1  # the delimiter
        if pos == n:
            fields.append(b"")
            return fields


def _quoted(rec: bytes, pos: int, delim: bytes) -> tuple[bytes, int]:
    out = bytearray()
    n = len(rec)
    while True:
        q = rec.find(b'"', pos)
        if q < 0:
            raise _invalid("Quoted field has to end with quote followed by delim or end")
        out += rec[pos:q]
        if q + 1 < n and rec[q + 1] == 0x22:
            out += b'"'
            pos = q + 2
            continue
        if q + 1 < n and rec[q + 1:q + 2] != delim:
            raise _invalid("Quote inside a string has to be escaped by another quote")
        return bytes(out), q + 1


def _csv_value(f: bytes, t, default, na: bytes, j: int, i: int):
    if not f or (na and f == na):
        if default is None:
            raise _invalid(f"Field {j} is required but missing in record {i}!")
        return default
    if t == dtypes.string:
        return f
    conv, np_t, tname = _CONVERTERS[t]
    s = f.strip()
    try:
        if b"_" in s:
            raise ValueError
        v = conv(s)
        if conv is int and not np.iinfo(np_t).min <= v <= np.iinfo(np_t).max:
            raise ValueError
        return v
    except ValueError:
        raise _invalid(f"Field {j} in record {i} is not a valid {tname}: "
                       f"{f.decode(errors='replace')}") from None


def _outputs(cols, types, shape) -> tuple | np.ndarray:
    outs = []
    for col, t in zip(cols, types):
        if t == dtypes.string:
            outs.append(_string_array(col, shape))
        else:
            outs.append(np.array(col, dtype=t.np_dtype).reshape(shape))
    return outs[0] if len(outs) == 1 else tuple(outs)


# -- files -----------------------------------------------------------------------------------
def _os_error(e: OSError, path: str) -> errors.OpError:
    cls = {2: errors.NotFoundError, 13: errors.PermissionDeniedError,
           21: errors.FailedPreconditionError}.get(e.errno or 0, errors.UnknownError)
    return cls(None, None, f"{path}; {os.strerror(e.errno) if e.errno else e}")


@register_kernel("ReadFile")
def _read_file(node):
    def run(filename):
        path = os.fsdecode(_bytes(np.asarray(filename, dtype=object).reshape(())[()]))
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise _os_error(e, path) from None
        out = np.empty((), object)
        out[()] = data
        return out

    return run


@register_kernel("WriteFile")
def _write_file(node):
    def run(filename, contents):
        path = os.fsdecode(_bytes(np.asarray(filename, dtype=object).reshape(())[()]))
        data = _bytes(np.asarray(contents, dtype=object).reshape(())[()])
        try:
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise _os_error(e, path) from None

    return run


# -- string conversions ----------------------------------------------------------------------
@register_kernel("StringToNumber")
def _string_to_number(node):
    out_dt = node.attr("out_type")
    np_t = out_dt.np_dtype
    is_int = out_dt.is_integer
    lo, hi = (np.iinfo(np_t).min, np.iinfo(np_t).max) if is_int else (None, None)

    def convert(s: bytes):
        t = s.strip()
        try:
            if b"_" in t:
                raise ValueError
            v = int(t) if is_int else float(t)
            if is_int and not lo <= v <= hi:
                raise ValueError
            return v
        except ValueError:
            raise _invalid(f"StringToNumberOp could not correctly convert string: "
                           f"{s.decode(errors='replace')}") from None

    def run(x):
        x = np.asarray(x, dtype=object)
        vals = [convert(_bytes(v)) for v in x.reshape(-1).tolist()]
        return np.array(vals, dtype=np_t).reshape(x.shape)

    return run


@register_kernel("EncodeBase64")
def _encode_base64(node):
    pad = node.attr("pad")

    def encode(v: bytes) -> bytes:
        out = base64.urlsafe_b64encode(v)
        return out if pad else out.rstrip(b"=")

    def run(x):
        x = np.asarray(x, dtype=object)
        return _string_array([encode(_bytes(v)) for v in x.reshape(-1).tolist()], x.shape)

    return run


@register_kernel("DecodeBase64")
def _decode_base64(node):
    def decode(v: bytes) -> bytes:
        v = v.rstrip(b"=")
        if len(v) % 4 == 1:
            raise _invalid("Invalid base64 length")
        try:
            return base64.b64decode(v + b"=" * (-len(v) % 4), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            raise _invalid("Invalid character found in base64.") from None

    def run(x):
        x = np.asarray(x, dtype=object)
        return _string_array([decode(_bytes(v)) for v in x.reshape(-1).tolist()], x.shape)

    return run
