"""CPU kernels for Example parsing (`ParseExampleV2`, `ParseExample`, `ParseSingleExample`)
and `SparseToDense`. Decoding of the wire format is in `example_parser.py`; the string and
file ops are in `parsing_io.py`.

A parse kernel builds an `ExampleParser` once per node (types, shapes); each step it checks
the dense defaults, decodes every record once and writes straight into preallocated outputs.
Errors are InvalidArgumentError naming the feature key and the record's index in the batch.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.cpu.example_batch import template_pass
from tensorweave.runtime.kernels.cpu.example_parser import (
    KIND_BYTES,
    FeatureSpec,
    describe,
    extract,
    record_name,
)
from tensorweave.runtime.kernels.registry import register_kernel


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def _dims(shape) -> tuple:
    dims = shape.as_tuple() if hasattr(shape, "as_tuple") else tuple(shape)
    if dims is None:
        raise _invalid("dense_shapes must have a known rank")
    return tuple(None if d is None or d < 0 else int(d) for d in dims)


def _fmt_shape(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _as_keys(arrays) -> list[bytes]:
    """The keys held by a string array, or by a sequence of string arrays (one key each)."""
    if isinstance(arrays, np.ndarray):
        arrays = [arrays]
    flat = [k for a in arrays for k in np.asarray(a, dtype=object).reshape(-1).tolist()]
    return [k.encode() if isinstance(k, str) else bytes(k) for k in flat]


class ExampleParser:
    """Parses serialized Examples into TF's output lists for fixed feature types/shapes.

    Call with (serialized, names, sparse_keys, dense_keys, dense_defaults); returns the flat
    outputs: sparse indices..., sparse values..., sparse shapes..., dense values....
    """

    def __init__(self, sparse_types, dense_types, dense_shapes):
        self.sparse_types = [dtypes.as_dtype(t).base_dtype for t in sparse_types]
        self.dense_types = [dtypes.as_dtype(t).base_dtype for t in dense_types]
        self.dense_shapes = [_dims(s) for s in dense_shapes]
        for dims in self.dense_shapes:
            if None in dims[1:]:
                raise _invalid(f"dense_shapes {_fmt_shape(dims)}: only the first dim may be "
                               "unknown")
        self._plans: dict = {}

    def _plan(self, sparse_keys, dense_keys):
        key = (tuple(sparse_keys), tuple(dense_keys))
        plan = self._plans.get(key)
        if plan is None:
            if len(dense_keys) != len(self.dense_types) or \
                    len(sparse_keys) != len(self.sparse_types):
                raise _invalid(f"Expected {len(self.dense_types)} dense and "
                               f"{len(self.sparse_types)} sparse keys, got {len(dense_keys)} "
                               f"and {len(sparse_keys)}")
            dense = [FeatureSpec(k, t, s, bool(s) and s[0] is None)
                     for k, t, s in zip(dense_keys, self.dense_types, self.dense_shapes)]
            sparse = [FeatureSpec(k, t) for k, t in zip(sparse_keys, self.sparse_types)]
            plan = self._plans[key] = (dense + sparse, frozenset(dense_keys + sparse_keys),
                                       {})
        return plan

    def __call__(self, serialized, names, sparse_keys, dense_keys, defaults) -> list:
        serialized = np.asarray(serialized, dtype=object)
        names = np.asarray(names, dtype=object)
        specs, wanted, layouts = self._plan(sparse_keys, dense_keys)
        if serialized.ndim == 0 and not self.sparse_types:
            outs = self._one_dense_record(serialized, names, specs, wanted)
            if outs is not None:
                return outs
        records = _records(serialized, names)
        n_dense = len(self.dense_types)
        if len(defaults) != n_dense:
            raise _invalid(f"Expected {n_dense} dense_defaults, got {len(defaults)}")
        fills = [_default(s, d, j) for j, (s, d) in enumerate(zip(specs, defaults))]
        batch = _Batch(specs, fills, len(records))
        if len(records) > 1:
            left = template_pass(records, specs, wanted, batch.rules, batch.put_rows,
                                 layouts.setdefault(batch.rules, {}))
        else:
            left = range(len(records))
        for i in left:
            batch.put(i, extract(records[i], specs, wanted, names, i), names)
        return batch.outputs(serialized.ndim == 0)


    @staticmethod
    def _one_dense_record(serialized, names, specs, wanted) -> list | None:
        """The common case of tf.data pipelines — one record, every dense feature present with
        its full size — without the batch machinery; None sends anything else (missing
        features, defaults, errors) down the general path, which reports it."""
        if any(s.variable for s in specs):
            return None
        try:
            vals = extract(_as_bytes(serialized.item()), specs, wanted, names, 0)
        except errors.OpError:
            return None
        out = []
        for spec, v in zip(specs, vals):
            if v is None:
                return None
            v = np.asarray(v)
            if v.size != spec.block:
                return None
            out.append(v.astype(spec.dtype.np_dtype, copy=False).reshape(spec.shape))
        return out


def _records(serialized: np.ndarray, names: np.ndarray) -> list[bytes]:
    if serialized.ndim > 1:
        raise _invalid(f"Expected serialized to be a scalar or vector, got shape "
                       f"{list(serialized.shape)}")
    records = [_as_bytes(r) for r in serialized.reshape(-1).tolist()]
    if names.size and names.size != len(records):
        raise _invalid(f"Expected len(names) == len(serialized), got {names.size} and "
                       f"{len(records)}")
    return records


class _Batch:
    """The outputs of one parse call being filled: dense columns, then sparse rows."""

    def __init__(self, specs, fills, size: int):
        self.n_dense = len(fills)
        self.specs = specs
        self.dense = [_DenseColumn(s, f, size) for s, f in zip(specs, fills)]
        self.sparse = [[None] * size for _ in specs[self.n_dense:]]
        # (required, exact count) per spec, for the layout pass
        self.rules = tuple((f is None and not s.variable, None if s.variable else s.block)
                           for s, f in zip(specs, fills)) + ((False, None),) * len(self.sparse)

    def put(self, i: int, vals: list, names) -> None:
        """Record i's values (one per spec, None where missing)."""
        for col, v in zip(self.dense, vals):
            col.put(i, v, names)
        for rows, v in zip(self.sparse, vals[self.n_dense:]):
            rows[i] = v

    def put_rows(self, j: int, idx: np.ndarray, vals) -> None:
        """Spec j's values for rows `idx` at once (the layout pass's sink)."""
        if j < self.n_dense:
            self.dense[j].put_rows(idx, vals)
        elif vals is not None:
            rows = self.sparse[j - self.n_dense]
            for k, i in enumerate(idx.tolist()):
                rows[i] = vals[k]

    def outputs(self, scalar: bool) -> list:
        sparse = [_sparse(s, rows, scalar)
                  for s, rows in zip(self.specs[self.n_dense:], self.sparse)]
        return [o[0] for o in sparse] + [o[1] for o in sparse] + [o[2] for o in sparse] + \
            [c.result(scalar) for c in self.dense]


def _as_bytes(buf) -> bytes:
    if isinstance(buf, bytes):
        return buf
    if isinstance(buf, str):
        return buf.encode()
    return bytes(buf)


def _default(spec: FeatureSpec, default, j: int):
    """The default fill of dense feature j: None (required), a scalar pad (variable), or an
    array of the feature's shape."""
    d = np.asarray(default, dtype=spec.dtype.np_dtype)
    if spec.variable:
        if d.size != 1:
            raise _invalid(f"dense_defaults[{j}] (key {_key(spec)}) must be a scalar "
                           f"padding value for a variable-length feature, got shape "
                           f"{list(d.shape)}")
        return d.reshape(())
    if d.size == 0:
        return None
    n = spec.block
    if d.size != n:
        raise _invalid(f"Default value for key {_key(spec)} must have {n} values for "
                       f"shape {_fmt_shape(spec.shape)}, got shape {list(d.shape)}")
    return d.reshape(-1)


class _DenseColumn:
    """One dense output being filled record by record."""

    def __init__(self, spec: FeatureSpec, fill, batch: int):
        self.spec, self.fill = spec, fill
        self.n = spec.block
        self.np_dtype = spec.dtype.np_dtype
        if spec.variable:
            self.rows: list = [None] * batch
        else:
            self.flat = np.empty((batch, self.n), self.np_dtype)

    def put(self, i: int, v, names) -> None:
        spec = self.spec
        if v is None:
            if spec.variable:
                return
            if self.fill is None:
                key = _key(spec)
                raise _invalid(f"Name: {record_name(names, i)}, Key: {key}, "
                               f"Index: {i}.  Feature: {key} (data type: "
                               f"{spec.dtype.name}) is required but could not be found.")
            self.flat[i] = self.fill
            return
        if spec.variable:
            if len(v) % self.n:
                raise _invalid(f"{describe(names, i, spec.key)}.  Number of "
                               f"{_kind(spec)} values is not a multiple of stride length. "
                               f"Saw {len(v)} values but output shape is: "
                               f"{_fmt_shape(spec.shape)}")
            self.rows[i] = v
            return
        if len(v) != self.n:
            raise _invalid(f"{describe(names, i, spec.key)}.  Number of {_kind(spec)} values "
                           f"!= expected.  Values size: {len(v)} but output shape: "
                           f"{_fmt_shape(spec.shape)}")
        self.flat[i] = v

    def put_rows(self, idx: np.ndarray, vals) -> None:
        """Rows `idx` at once: `vals` is a (rows, count) array, a list of value lists, or None
        (missing: the default or, for a variable-length feature, all padding)."""
        if self.spec.variable:
            if vals is not None:
                for k, i in enumerate(idx.tolist()):
                    self.rows[i] = vals[k]
            return
        if vals is None:
            self.flat[idx] = self.fill
        elif isinstance(vals, list):
            for k, i in enumerate(idx.tolist()):
                self.flat[i] = vals[k]
        elif idx.size == self.flat.shape[0]:
            self.flat[...] = vals  # every row, in order (one group)
        else:
            self.flat[idx] = vals

    def result(self, scalar: bool) -> np.ndarray:
        if self.spec.variable:
            out = self._padded()
        else:
            out = self.flat.reshape((self.flat.shape[0],) + self.spec.shape)
        return out[0] if scalar else out

    def _padded(self) -> np.ndarray:
        rest = self.spec.shape[1:]
        lengths = [0 if r is None else len(r) // self.n for r in self.rows]
        width = max(lengths, default=0)
        out = np.empty((len(self.rows), width * self.n), self.np_dtype)
        out[...] = self.fill
        for i, (r, k) in enumerate(zip(self.rows, lengths)):
            if k:
                out[i, :k * self.n] = r
        return out.reshape((len(self.rows), width) + rest)


def _key(spec: FeatureSpec) -> str:
    return spec.key.decode(errors="replace")


def _kind(spec: FeatureSpec) -> str:
    return {dtypes.float32: "float", dtypes.int64: "int64"}.get(spec.dtype, "bytes")


def _sparse(spec: FeatureSpec, rows: list, scalar: bool):
    """(indices, values, dense_shape) of one VarLenFeature over the batch."""
    counts = np.fromiter((0 if r is None else len(r) for r in rows), np.int64, len(rows))
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    within = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    batch = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    width = int(counts.max()) if len(rows) else 0
    present = [r for r in rows if r is not None and len(r)]
    if spec.kind == KIND_BYTES:
        values = np.empty(total, object)
        values[:] = [b for r in present for b in r]
    elif present:
        values = np.concatenate(present).astype(spec.dtype.np_dtype, copy=False)
    else:
        values = np.zeros(0, spec.dtype.np_dtype)
    if scalar:
        return within.reshape(-1, 1), values, np.array([width], np.int64)
    return (np.stack([batch, within], 1), values,
            np.array([len(rows), width], np.int64))


class _KeyCache:
    """`_as_keys` remembered per key array: the keys are constants, the same array each step."""

    def __init__(self):
        self._last: dict[int, tuple] = {}

    def __call__(self, arr) -> list[bytes]:
        hit = self._last.get(id(arr))
        if hit is not None and hit[0] is arr:
            return hit[1]
        keys = _as_keys(arr)
        if isinstance(arr, np.ndarray) and not arr.flags.writeable:
            self._last[id(arr)] = (arr, keys)  # NOTE: read-only constants only
        return keys


def _single_output(outs: list):
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else tuple(outs)


# -- kernels ---------------------------------------------------------------------------------
@register_kernel("ParseExampleV2")
def _parse_example_v2(node):
    if node.attr("ragged_value_types"):
        raise errors.UnimplementedError(None, None, "ParseExampleV2: ragged features are not "
                                                    "supported")
    parser = ExampleParser(node.attr("sparse_types") or [], node.attr("Tdense") or [],
                           node.attr("dense_shapes") or [])

    keys_of = _KeyCache()

    def run(serialized, names, sparse_keys, dense_keys, ragged_keys, *defaults):
        if np.asarray(ragged_keys).size:
            raise _invalid("ragged_keys are not supported")
        outs = parser(serialized, names, keys_of(sparse_keys), keys_of(dense_keys), defaults)
        return _single_output(outs)

    return run


@register_kernel("ParseExample")
def _parse_example(node):
    parser = ExampleParser(node.attr("sparse_types") or [], node.attr("Tdense") or [],
                           node.attr("dense_shapes") or [])
    n_sparse, n_dense = node.attr("Nsparse"), node.attr("Ndense")

    def run(serialized, names, *rest):
        sparse_keys = _as_keys(rest[:n_sparse])
        dense_keys = _as_keys(rest[n_sparse:n_sparse + n_dense])
        if np.ndim(serialized) != 1:
            raise _invalid(f"Expected serialized to be a vector, got shape "
                           f"{list(np.shape(serialized))}")
        outs = parser(serialized, names, sparse_keys, dense_keys, rest[n_sparse + n_dense:])
        return _single_output(outs)

    return run


@register_kernel("ParseSingleExample")
def _parse_single_example(node):
    parser = ExampleParser(node.attr("sparse_types") or [], node.attr("Tdense") or [],
                           node.attr("dense_shapes") or [])
    sparse_keys = _as_keys(node.attr("sparse_keys") or [])
    dense_keys = _as_keys(node.attr("dense_keys") or [])
    no_names = np.zeros(0, object)

    def run(serialized, *defaults):
        if np.ndim(serialized) != 0:
            raise _invalid(f"Expected serialized to be a scalar, got shape "
                           f"{list(np.shape(serialized))}")
        return _single_output(parser(serialized, no_names, sparse_keys, dense_keys,
                                     defaults))

    return run


@register_kernel("SparseToDense")
def _sparse_to_dense(node):
    validate = node.attr("validate_indices")
    np_dtype = node.attr("T").np_dtype

    def run(indices, output_shape, values, default_value):
        shape = tuple(int(d) for d in np.asarray(output_shape).reshape(-1))
        idx = _index_matrix(np.asarray(indices), len(shape))
        values = np.asarray(values)
        if values.ndim and values.shape[0] != idx.shape[0]:
            raise _invalid(f"sparse_values has incorrect shape {list(values.shape)}, should "
                           f"be [] or [{idx.shape[0]}]")
        _check_indices(idx, shape, validate)
        out = np.empty(shape, np_dtype)
        out[...] = default_value
        if idx.shape[0]:
            out[tuple(idx.T)] = values
        return out

    return run


def _index_matrix(indices: np.ndarray, rank: int) -> np.ndarray:
    if indices.ndim > 2:
        raise _invalid(f"sparse_indices should be a scalar, vector, or matrix, got shape "
                       f"{list(indices.shape)}")
    if indices.ndim < 2:
        indices = indices.reshape(-1, 1) if rank == 1 or indices.ndim == 0 \
            else indices.reshape(1, -1)
    if indices.shape[1] != rank:
        raise _invalid(f"sparse_indices has {indices.shape[1]} columns but output_shape has "
                       f"{rank} dims")
    return indices.astype(np.int64, copy=False)


def _check_indices(idx: np.ndarray, shape: tuple, validate: bool) -> None:
    if not idx.shape[0]:
        return
    bad = np.flatnonzero(((idx < 0) | (idx >= np.asarray(shape, np.int64))).any(axis=1))
    if bad.size:
        i = int(bad[0])
        raise _invalid(f"indices[{i}] = {_fmt_shape(idx[i].tolist())} is out of bounds: need "
                       f"0 <= index < {_fmt_shape(shape)}")
    if not validate or idx.shape[0] < 2:
        return
    flat = np.ravel_multi_index(tuple(idx.T), shape) if shape else np.zeros(len(idx), np.int64)
    step = np.diff(flat)
    bad = np.flatnonzero(step <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        what = "is repeated" if step[i - 1] == 0 else \
            "is out of order. Many sparse ops require sorted indices."
        raise _invalid(f"indices[{i}] = {_fmt_shape(idx[i].tolist())} {what}")
