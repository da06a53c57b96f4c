"""Vectorized parsing of many Examples that share one layout (the usual case: every record
of a dataset is written by the same code, so records of equal length have their tags, keys
and lengths at the same byte positions).

Records are grouped by length. For a group, the first record is scanned once into a
`Layout`: which bytes are structure (tags, lengths, keys, varint continuation bits) and where
each wanted feature's values lie. Every record of the group whose structural bytes equal the
template's parses exactly like the template, so its values are read for the whole group at
once: packed floats with one strided copy, packed varints with one vectorized decode. Records
that differ, groups too small to pay off, and templates that would fail to parse (a missing
required feature, a wrong type or count) are left to the per-record path, which raises the
errors; so no error is raised here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tensorweave.runtime.kernels.cpu.example_parser import (
    KIND_BYTES,
    KIND_FLOAT,
    KIND_INT64,
    FeatureSpec,
    Malformed,
    feature_kind,
    read_varint,
    scan,
)

MIN_GROUP = 4


@dataclass
class _Field:
    """Where one spec's values lie in a record of the layout."""

    kind: int = 0            # 0: missing, else KIND_*
    start: int = 0
    end: int = 0
    count: int = 0
    starts: np.ndarray | None = None   # int64: varint starts, relative to `start`
    shifts: np.ndarray | None = None   # int64: bit shift of each payload byte
    items: list = field(default_factory=list)   # bytes: (offset, length) of each value


@dataclass
class Layout:
    """A template record's structure: bytes that must match, and each spec's `_Field`."""

    care_idx: np.ndarray
    care_val: np.ndarray
    cont_idx: np.ndarray
    cont_val: np.ndarray
    fields: list

    def matches(self, arr: np.ndarray) -> np.ndarray:
        """Per row of `arr` (records as uint8 rows): True where the structure is the same."""
        ok = (arr[:, self.care_idx] == self.care_val).all(axis=1)
        if self.cont_idx.size:
            ok &= ((arr[:, self.cont_idx] & 0x80) == self.cont_val).all(axis=1)
        return ok


def layout_of(buf: bytes, specs, wanted, rules) -> Layout | None:
    """The layout of template record `buf`, or None when it is not the plain encoding or
    when parsing it would fail. `rules[j]` is (required, exact count or None) for spec j:
    a dense fixed feature without default is required and needs exactly its block of
    values."""
    skipped: list = []
    try:
        found = scan(buf, wanted, skipped)
        fields = [_field_of(buf, found.get(s.key), s) for s in specs]
    except (Malformed, IndexError, ValueError):
        return None
    for f, s, rule in zip(fields, specs, rules):
        if f is None or not _fits(f, s, rule):
            return None
    care = np.ones(len(buf), bool)
    cont: list = []
    for s, e in skipped:
        care[s:e] = False
    for f in fields:
        _mark(f, care, cont)  # type: ignore[arg-type]  (None was rejected above)
    tpl = np.frombuffer(buf, np.uint8)
    care_idx = np.flatnonzero(care)
    cont_idx = np.array(cont, np.intp)
    return Layout(care_idx, tpl[care_idx], cont_idx, tpl[cont_idx] & 0x80, fields)


def _fits(f: _Field, spec: FeatureSpec, rule) -> bool:
    """Whether parsing the template would succeed; `rule` is (required, exact count|None)."""
    required, exact = rule
    if f.end == -1:
        return not required
    if spec.variable:
        return f.count % spec.block == 0
    return exact is None or f.count == exact


def _field_of(buf, ref, spec: FeatureSpec) -> _Field | None:
    """The spec's `_Field`; `end == -1` marks a missing feature; None for an unusual one."""
    if ref is None:
        return _Field(end=-1)
    _, s, e = ref
    kind, p, e = feature_kind(buf, s, e)
    if kind == 0:
        return _Field(kind=spec.kind, start=p, end=p)
    if kind != spec.kind:
        return None
    if kind == KIND_BYTES:
        return _bytes_field(buf, p, e)
    if p == e:
        return _Field(kind=kind, start=p, end=p)
    if buf[p] != 0x0A:
        return None
    size, q = read_varint(buf, p + 1)
    if q + size != e:
        return None
    if kind == KIND_FLOAT:
        return _Field(KIND_FLOAT, q, e, size >> 2) if not size & 3 else None
    return _varint_field(buf, q, e)


def _varint_field(buf, q: int, e: int) -> _Field:
    b = np.frombuffer(buf, np.uint8, e - q, q)
    ends = np.flatnonzero(b < 0x80)
    if not ends.size or ends[-1] != b.size - 1:
        raise Malformed("packed varints")
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.intp)
    lengths = ends - starts + 1
    if lengths.max() > 10:
        raise Malformed("varint too long")
    shifts = ((np.arange(b.size) - np.repeat(starts, lengths)) * 7).astype(np.uint64)
    return _Field(KIND_INT64, q, e, int(ends.size), starts, shifts)


def _bytes_field(buf, p: int, e: int) -> _Field:
    items = []
    while p < e:
        if buf[p] != 0x0A:
            raise Malformed("BytesList field")
        size, p = read_varint(buf, p + 1)
        items.append((p, size))
        p += size
    if p != e:
        raise Malformed("BytesList")
    return _Field(KIND_BYTES, start=0, end=e, count=len(items), items=items)


def _mark(f: _Field, care: np.ndarray, cont: list) -> None:
    """Clears `care` on value bytes; int64 payload bytes keep only their continuation bit."""
    if f.kind == KIND_FLOAT:
        care[f.start:f.end] = False
    elif f.kind == KIND_INT64 and f.end > f.start:
        care[f.start:f.end] = False
        cont.extend(range(f.start, f.end))
    elif f.kind == KIND_BYTES:
        for o, n in f.items:
            care[o:o + n] = False


# -- reading values for a group ----------------------------------------------------------------
def _values(f: _Field, rows: np.ndarray, records: list):
    """One spec's values for every row: a (rows, count) array, a list of byte lists, or None
    when the feature is missing."""
    if f.end == -1:
        return None
    n = rows.shape[0]
    if f.kind == KIND_FLOAT:
        return rows[:, f.start:f.end].view("<f4")  # a strided view: the caller copies it
    if f.kind == KIND_INT64:
        if f.end == f.start:
            return np.zeros((n, 0), np.int64)
        if f.count == f.end - f.start:  # every varint is one byte
            return rows[:, f.start:f.end].astype(np.int64)
        parts = (rows[:, f.start:f.end] & 0x7F).astype(np.uint64) << f.shifts
        return np.add.reduceat(parts, f.starts, axis=1).view(np.int64)
    return [[r[o:o + k] for o, k in f.items] for r in records]  # records: the group's rows


def template_pass(records: list, specs, wanted, rules, sink, cache: dict | None = None) -> list:
    """Parses the records that can go through a group layout, reporting each spec's values as
    `sink(spec_index, row_indices, values)` (`values` as `_values` returns). `cache` keeps
    one layout per record length between calls (for the same specs and rules). Returns the
    indices left for the per-record path, ascending."""
    left: list = []
    cache = {} if cache is None else cache
    for idx in _groups(records):
        if len(idx) < MIN_GROUP:
            left.extend(idx.tolist())
            continue
        group = records if len(idx) == len(records) else [records[i] for i in idx]
        arr = np.frombuffer(b"".join(group), np.uint8).reshape(len(idx), -1)
        lay, ok = _layout_for(arr, group[0], specs, wanted, rules, cache)
        if lay is None:
            left.extend(idx.tolist())
            continue
        if not ok.all():
            left.extend(idx[~ok].tolist())
            idx, arr = idx[ok], arr[ok]
            group = [g for g, good in zip(group, ok.tolist()) if good]
        for j, f in enumerate(lay.fields):
            sink(j, idx, _values(f, arr, group))
    left.sort()
    return left


def _layout_for(arr, first: bytes, specs, wanted, rules, cache: dict):
    """The group's layout (the cached one for this length while the first row still fits)
    and the rows that match it; (None, None) when the first record has no usable layout."""
    lay = cache.get(arr.shape[1])
    if lay is not None:
        ok = lay.matches(arr)
        if ok[0]:
            return lay, ok
    lay = layout_of(first, specs, wanted, rules)
    if lay is None:
        return None, None
    if len(cache) > 64:
        cache.clear()
    cache[arr.shape[1]] = lay
    return lay, lay.matches(arr)


def _groups(records: list) -> list:
    """Record indices grouped by record length (one array per length)."""
    lengths = list(map(len, records))
    if not lengths:
        return []
    if min(lengths) == max(lengths):
        return [np.arange(len(lengths))]
    lengths = np.array(lengths)
    order = np.argsort(lengths, kind="stable")
    cuts = np.flatnonzero(np.diff(lengths[order])) + 1
    return np.split(order, cuts)
