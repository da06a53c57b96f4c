"""`tf.data.experimental` transformations and sources: `ignore_errors`, `scan`,
`group_by_window`, `bucket_by_sequence_length`,
`map_and_batch`, `parallel_interleave`, `get_single_element`, `CsvDataset`,
`make_csv_dataset`; and `tf.data.Options` with `get_output_types/shapes/classes`.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorweave import dtypes
from tensorweave.data import structure as nest
from tensorweave.data.dataset import Dataset, _i64
from tensorweave.data.structure import Spec
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import function
from tensorweave.ops.apply import apply_op
from tensorweave.shapes import TensorShape

_ids = itertools.count()


class IgnoreErrorsDataset(Dataset):
    """A dataset that skips elements whose computation failed; `skipped_count()` tells how
    many this process skipped so far (a log line reports each skip)."""

    def skipped_count(self) -> int:
        from tensorweave.runtime.kernels.cpu.dataset_readers import SKIPPED

        return SKIPPED.get(self._variant_tensor.op.get_attr("_skip_counter").decode())


def ignore_errors(log_warning=True):
    """A transformation for `Dataset.apply` that drops elements whose computation raised
    (a corrupt record, a failed map function) and always moves on to the next one."""

    def apply(dataset: Dataset) -> IgnoreErrorsDataset:
        # NOTE: `_skip_counter` (an internal attr) keys this op's count, unique per process
        out = dataset._derive("IgnoreErrorsDataset", log_warning=bool(log_warning),
                              _skip_counter=f"ignore_errors_{next(_ids)}")
        return IgnoreErrorsDataset(out._variant_tensor, out._structure)

    return apply


# -- scan -----------------------------------------------------------------------------------
def _trace_scan(dataset: Dataset, state, scan_func):
    """Traces scan_func(state, element) -> (new_state, output); returns (traced, n_state,
    output structure)."""
    state_specs = nest.map_structure(lambda t: Spec(t.dtype.base_dtype, t.shape), state)
    flat_state = nest.flatten(state_specs)
    sig = [(s.dtype, s.shape) for s in flat_state + nest.flatten(dataset._structure)]
    holder = {}

    def call(f, args):
        st = nest.pack(state_specs, args[:len(flat_state)])
        el = nest.pack(dataset._structure, args[len(flat_state):])
        plain_tuple = isinstance(el, tuple) and not hasattr(el, "_fields")
        result = nest.normalize(f(st, *el) if plain_tuple else f(st, el))
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError("scan_func must return a pair (new_state, output)")
        return result

    def flat_outputs(result):
        new_state, output = (nest.map_structure(convert_to_tensor, r) for r in result)
        holder["output"] = output
        new_flat = nest.flatten(new_state)
        if [t.dtype.base_dtype for t in new_flat] != [s.dtype for s in flat_state]:
            raise TypeError("The element types for the new state must match the initial "
                            "state.")
        return new_flat + nest.flatten(output)

    traced = function.trace(scan_func, sig, flatten=(call, flat_outputs))
    outs = list(zip(traced.output_dtypes, traced.output_shapes))[len(flat_state):]
    structure = nest.pack(holder["output"], [Spec(dt, s) for dt, s in outs])
    return traced, flat_state, structure


def scan(initial_state, scan_func):
    """A transformation: carries a state through the elements; scan_func(state, element)
    returns (new_state, output_element) (ScanDataset)."""

    def apply(dataset: Dataset) -> Dataset:
        state = nest.map_structure(convert_to_tensor, initial_state)
        traced, _, structure = _trace_scan(dataset, state, scan_func)
        f = function.add_to_graph(dataset._variant_tensor.graph, traced)
        return dataset._derive("ScanDataset", nest.flatten(state), list(traced.captures),
                               structure=structure, f=f)

    return apply


# -- group_by_window / bucket_by_sequence_length -----------------------------------------
def _trace_plain(fn, sig, what):
    try:
        return function.trace(fn, sig)
    except TypeError as e:
        raise TypeError(f"Error tracing the {what} function: {e}") from e


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """A transformation: elements grouped by `key_func` (a scalar int64), each group of
    `window_size` (or `window_size_func(key)`) elements handed as a Dataset to
    `reduce_func(key, window)`, whose elements are the output (GroupByWindowDataset)."""
    if (window_size is None) == (window_size_func is None):
        raise ValueError("Either the `window_size` argument or the `window_size_func` "
                         "argument must be specified.")
    if window_size is not None:
        def window_size_func(_key):
            return convert_to_tensor(np.int64(window_size))

    def apply(dataset: Dataset) -> Dataset:
        key = dataset._trace(key_func, "key_func")
        if key.output_dtypes != [dtypes.int64] or key.output_shapes[0].ndims not in (0, None):
            raise ValueError("`key_func` must return a single tf.int64 scalar tensor.")
        size = _trace_plain(window_size_func, [(dtypes.int64, [])], "window_size_func")
        if size.output_dtypes != [dtypes.int64]:
            raise ValueError("`window_size_func` must return a single tf.int64 scalar tensor.")
        reduce = function.trace(
            reduce_func, [(dtypes.int64, []), (dtypes.variant, [])],
            flatten=(lambda f, a: f(a[0], Dataset(a[1], dataset._structure)),
                     lambda result: _reduce_outputs(result)[0]))
        graph = dataset._variant_tensor.graph
        attrs = {"key_func": function.add_to_graph(graph, key),
                 "reduce_func": function.add_to_graph(graph, reduce),
                 "window_size_func": function.add_to_graph(graph, size)}
        return dataset._derive("GroupByWindowDataset", list(key.captures),
                               list(reduce.captures), list(size.captures),
                               structure=_reduce_outputs(reduce.structured_outputs)[1], **attrs)

    return apply


def _reduce_outputs(result) -> tuple[list, object]:
    """([the variant], the element structure) of reduce_func's Dataset."""
    if not isinstance(result, Dataset):
        raise TypeError("`reduce_func` must return a `Dataset` object.")
    return [result._variant_tensor], result._structure


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """A transformation: elements bucketed by `element_length_func` between
    `bucket_boundaries`, each bucket padded-batched by its `bucket_batch_sizes` entry (TF's
    construction on group_by_window)."""
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError("len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1")
    if pad_to_bucket_boundary:
        raise NotImplementedError("bucket_by_sequence_length(pad_to_bucket_boundary=True) "
                                  "is not supported")
    from tensorweave.ops import gather_ops, math_ops, reduction_ops

    boundaries = list(bucket_boundaries)
    lows = np.array([np.iinfo(np.int32).min] + boundaries, np.int64)
    highs = np.array(boundaries + [np.iinfo(np.int32).max], np.int64)
    sizes = np.array(bucket_batch_sizes, np.int64)

    def bucket_id(*args):
        length = math_ops.cast(element_length_func(*args), dtypes.int64)
        inside = math_ops.logical_and(math_ops.less_equal(lows, length),
                                      math_ops.less(length, highs))
        return reduction_ops.reduce_min(gather_ops.where(inside))

    def window_size(bucket):
        return gather_ops.gather(sizes, bucket)

    def batching(bucket, window):
        size = window_size(bucket)
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        shapes = padded_shapes if padded_shapes is not None else window.output_shapes
        return window.padded_batch(size, shapes, padding_values, drop_remainder)

    return group_by_window(bucket_id, batching, window_size_func=window_size)


# -- composites -----------------------------------------------------------------------------
def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """map(map_func) then batch(batch_size): the fused transformation's results."""
    parallel = num_parallel_calls or num_parallel_batches

    def apply(dataset: Dataset) -> Dataset:
        return dataset.map(map_func, num_parallel_calls=parallel).batch(
            batch_size, drop_remainder=drop_remainder)

    return apply


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """interleave(map_func, cycle_length, block_length) in its deterministic order (the order
    TF gives with sloppy=False; with sloppy=True any order is allowed, so this one is too)."""

    def apply(dataset: Dataset) -> Dataset:
        return dataset.interleave(map_func, cycle_length=cycle_length,
                                  block_length=block_length)

    return apply


def get_single_element(dataset: Dataset):
    """The only element of `dataset` (InvalidArgumentError at run time if it has none or
    more than one) (DatasetToSingleElement)."""
    if not isinstance(dataset, Dataset):
        raise TypeError("`dataset` must be a `tf.data.Dataset` object.")
    flat = nest.flatten(dataset._structure)
    op = apply_op("DatasetToSingleElement", dataset._variant_tensor,
                  output_types=[s.dtype for s in flat],
                  output_shapes=[s.shape for s in flat])[0][0].op
    return nest.pack(dataset._structure, list(op.outputs))


class Options:
    """`tf.data.Options`: settings a pipeline may carry. Every setting is accepted and kept;
    this runtime has no graph rewrites of datasets to switch, so none changes the results."""

    def __init__(self):
        self.experimental_deterministic = None
        self.experimental_optimization = _Section()
        self.experimental_threading = _Section()
        self.experimental_distribute = _Section()
        self.experimental_slack = False

    def merge(self, other: Options) -> Options:
        out = Options()
        out.__dict__.update({k: v for k, v in self.__dict__.items()})
        out.__dict__.update({k: v for k, v in other.__dict__.items() if v is not None})
        return out


class _Section:
    """An options group (`experimental_optimization` ...): any attribute, default None."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def with_options(dataset: Dataset, options: Options) -> Dataset:
    """`dataset` with `options` attached (merged with any it had)."""
    out = Dataset(dataset._variant_tensor, dataset._structure)
    before = getattr(dataset, "_options", None)
    out._options = before.merge(options) if before is not None else options
    return out


def get_output_types(dataset):
    return dataset.output_types


def get_output_shapes(dataset):
    return dataset.output_shapes


def get_output_classes(dataset):
    return dataset.output_classes


# -- CSV ------------------------------------------------------------------------------------
_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


def _record_default(value):
    if isinstance(value, dtypes.DType) or value in _CSV_TYPES:
        return convert_to_tensor(np.zeros([0], dtypes.as_dtype(value).np_dtype)
                                 if dtypes.as_dtype(value) != dtypes.string
                                 else np.zeros([0], object), dtype=dtypes.as_dtype(value))
    t = convert_to_tensor(value)
    if t.dtype.base_dtype not in _CSV_TYPES:
        raise TypeError(f"record_defaults must be of types {[d.name for d in _CSV_TYPES]}, "
                        f"got {t.dtype.name}")
    return t


class CsvDataset(Dataset):
    """The records of CSV files, one tuple of scalars per line (CSVDataset).

    `record_defaults`: per selected column a dtype (the field is required) or a default
    value (used for empty and `na_value` fields); `select_cols`: increasing column indices.
    """

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None):
        defaults = [_record_default(v) for v in record_defaults]
        structure = tuple(Spec(d.dtype.base_dtype, TensorShape([])) for d in defaults)
        files = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
        select = np.array(select_cols if select_cols is not None else [], np.int64)
        v = apply_op("CSVDataset", files, convert_to_tensor(compression_type or ""),
                     _i64(buffer_size or 4 << 20), convert_to_tensor(bool(header)),
                     convert_to_tensor(field_delim), convert_to_tensor(bool(use_quote_delim)),
                     convert_to_tensor(na_value), convert_to_tensor(select), defaults,
                     output_types=[s.dtype for s in structure],
                     output_shapes=[s.shape for s in structure])
        super().__init__(v, structure)


__all__ = ["CsvDataset", "Options", "bucket_by_sequence_length", "get_output_classes",
           "get_output_shapes", "get_output_types", "get_single_element", "group_by_window",
           "ignore_errors", "map_and_batch", "parallel_interleave", "scan", "with_options"]
