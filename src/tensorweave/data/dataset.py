"""`tf.data.Dataset` in graph mode: each Dataset wraps a `variant` tensor (a dataset op's
output) and its element structure (`data/structure.py` Specs).

Transformation functions are traced into graph functions (`ops/function.py`); outer
tensors they use become the op's `other_arguments`. Iterators are in `data/iterator.py`.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.data import structure as nest
from tensorweave.data.structure import Spec
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import dataset_ops, function
from tensorweave.ops.apply import apply_op
from tensorweave.shapes import TensorShape

AUTOTUNE = -1


def _to_tensor_structure(value):
    """Tensors for every leaf of `value` (tuples/dicts are structure, lists are values)."""
    if isinstance(value, dict):
        return {k: _to_tensor_structure(v) for k, v in value.items()}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_tensor_structure(v) for v in value)
    return convert_to_tensor(value)


class Dataset:
    """A graph-mode dataset: `_variant_tensor` and the element `_structure` of Specs."""

    _options: object = None   # a tf.data.Options once `with_options` attached one

    def __init__(self, variant, structure):
        self._variant_tensor = variant
        self._structure = structure

    # -- element structure ------------------------------------------------------------------
    @property
    def output_types(self):
        return nest.map_structure(lambda s: s.dtype, self._structure)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda s: s.shape, self._structure)

    @property
    def output_classes(self):
        from tensorweave.framework.operation import Tensor

        return nest.map_structure(lambda s: Tensor, self._structure)

    def _flat_attrs(self, structure=None) -> dict:
        flat = nest.flatten(self._structure if structure is None else structure)
        return {"output_types": [s.dtype for s in flat],
                "output_shapes": [s.shape for s in flat]}

    def _derive(self, op_type, *inputs, structure=None, **attrs) -> Dataset:
        structure = self._structure if structure is None else structure
        v = apply_op(op_type, self._variant_tensor, *inputs,
                     **self._flat_attrs(structure), **attrs)
        return Dataset(v, structure)

    # -- sources ----------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors) -> Dataset:
        """One element per row of the components (all must share their first dimension)."""
        t = _to_tensor_structure(tensors)
        flat = nest.flatten(t)
        for x in flat:
            if x.shape.ndims == 0:
                raise ValueError(f"Cannot slice a scalar tensor {x.name} in from_tensor_slices")
        dims = {x.shape.as_tuple()[0] for x in flat if x.shape.ndims} - {None}
        if len(dims) > 1:
            raise ValueError(f"Dimensions {sorted(dims)} in from_tensor_slices are not equal")
        shapes = [TensorShape(None) if x.shape.ndims is None else TensorShape(
            x.shape.as_tuple()[1:]) for x in flat]
        v = apply_op("TensorSliceDataset", flat, output_shapes=shapes)
        return Dataset(v, nest.pack(t, [Spec(x.dtype.base_dtype, s)
                                        for x, s in zip(flat, shapes)]))

    @staticmethod
    def from_tensors(tensors) -> Dataset:
        """A dataset of one element: `tensors`."""
        t = _to_tensor_structure(tensors)
        flat = nest.flatten(t)
        v = apply_op("TensorDataset", flat, output_shapes=[x.shape for x in flat])
        return Dataset(v, nest.pack(t, [Spec(x.dtype.base_dtype, x.shape) for x in flat]))

    @staticmethod
    def range(*args) -> Dataset:
        """`range(stop)`, `range(start, stop)` or `range(start, stop, step)` as int64."""
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (
            (args[0], args[1], 1) if len(args) == 2 else args)
        spec = Spec(dtypes.int64, TensorShape([]))
        v = apply_op("RangeDataset", start, stop, step, output_types=[dtypes.int64],
                     output_shapes=[spec.shape])
        return Dataset(v, spec)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None) -> Dataset:
        """Elements from `generator()` (a callable returning an iterator), converted to
        `output_types`. Runs only in this process (the generator is not in the GraphDef)."""
        if args is not None:
            raise NotImplementedError("from_generator(args=...) is not supported yet")
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        from tensorweave.framework.graph import get_default_graph

        structure = nest.specs_from(output_types, output_shapes)
        flat = nest.flatten(structure)

        def make():
            for el in generator():
                yield tuple(nest.flatten(el)) if nest.is_nested(
                    structure) else el

        token = dataset_ops.register_generator(make, get_default_graph())
        v = apply_op("_PyGeneratorDataset", token=token, output_types=[s.dtype for s in flat],
                     output_shapes=[s.shape for s in flat])
        return Dataset(v, structure)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None) -> Dataset:
        from tensorweave.data.transforms.readers import list_files

        return list_files(file_pattern, shuffle, seed)

    # -- functions --------------------------------------------------------------------------
    def _trace(self, fn, what: str) -> function.TracedFunction:
        structure = self._structure
        sig = [(s.dtype, s.shape) for s in nest.flatten(structure)]

        def call(f, args):
            element = nest.pack(structure, args)
            if isinstance(element, tuple) and not hasattr(element, "_fields"):
                return nest.normalize(f(*element))
            return nest.normalize(f(element))

        def flat_outputs(result):
            if isinstance(result, Dataset):
                return [result._variant_tensor]
            return nest.flatten(_to_tensor_structure(result))

        try:
            return function.trace(fn, sig, flatten=(call, flat_outputs))
        except TypeError as e:
            raise TypeError(f"Error tracing the {what} function: {e}") from e

    def _with_function(self, traced) -> dict:
        graph = self._variant_tensor.graph
        return {"f": function.add_to_graph(graph, traced)}

    @staticmethod
    def _out_structure(traced) -> object:
        if isinstance(traced.structured_outputs, Dataset):
            return traced.structured_outputs._structure
        result = _to_tensor_structure(traced.structured_outputs)
        specs = [Spec(dt, s) for dt, s in zip(traced.output_dtypes, traced.output_shapes)]
        return nest.pack(result, specs)

    def map(self, map_func, num_parallel_calls=None) -> Dataset:
        """Applies `map_func` to each element; with `num_parallel_calls` (AUTOTUNE = -1:
        two threads) several elements are mapped at once, in order."""
        traced = self._trace(map_func, "map")
        structure = self._out_structure(traced)
        attrs = self._with_function(traced)
        if num_parallel_calls is None:
            return self._derive("MapDataset", list(traced.captures), structure=structure,
                                **attrs)
        n = convert_to_tensor(np.int32(num_parallel_calls))
        return self._derive("ParallelMapDataset", list(traced.captures), n,
                            structure=structure, **attrs)

    # -- simple transformations -------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False) -> Dataset:
        """Stacks `batch_size` consecutive elements (the last batch may be smaller unless
        `drop_remainder`)."""
        dim = batch_size if drop_remainder and isinstance(batch_size, int) else None
        structure = nest.map_structure(
            lambda s: Spec(s.dtype, TensorShape([dim]).concatenate(s.shape)), self._structure)
        return self._derive("BatchDatasetV2", _i64(batch_size), _bool(drop_remainder),
                            structure=structure)

    def repeat(self, count=None) -> Dataset:
        """Repeats the dataset `count` times (forever when None or -1)."""
        return self._derive("RepeatDataset", _i64(-1 if count is None else count))

    def take(self, count) -> Dataset:
        return self._derive("TakeDataset", _i64(count))

    def skip(self, count) -> Dataset:
        return self._derive("SkipDataset", _i64(count))

    def apply(self, transformation_func) -> Dataset:
        """`transformation_func(self)`, which must return a Dataset."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return out

    def filter(self, predicate) -> Dataset:
        """Keeps the elements for which `predicate` (a scalar tf.bool) is True."""
        traced = self._trace(predicate, "filter")
        if traced.output_dtypes != [dtypes.bool_] or traced.output_shapes[0].ndims not in (
                0, None):
            raise ValueError("`predicate` must return a scalar boolean tensor.")
        f = function.add_to_graph(self._variant_tensor.graph, traced)
        return self._derive("FilterDataset", list(traced.captures), predicate=f)

    def flat_map(self, map_func) -> Dataset:
        """Maps each element to a Dataset (`map_func`) and flattens the results in order."""
        traced = self._dataset_fn(map_func, "flat_map")
        return self._derive("FlatMapDataset", list(traced.captures),
                            structure=self._out_structure(traced), **self._with_function(traced))

    def interleave(self, map_func, cycle_length=None, block_length=1,
                   num_parallel_calls=None) -> Dataset:
        """Interleaves the Datasets `map_func` returns: `cycle_length` at once (AUTOTUNE or
        None: 2), `block_length` consecutive elements from each. Deterministic order."""
        traced = self._dataset_fn(map_func, "interleave")
        cycle = 2 if cycle_length in (None, AUTOTUNE) else cycle_length
        return self._derive("InterleaveDataset", list(traced.captures), _i64(cycle),
                            _i64(block_length), structure=self._out_structure(traced),
                            **self._with_function(traced))

    def _dataset_fn(self, map_func, what):
        traced = self._trace(map_func, what)
        if not isinstance(traced.structured_outputs, Dataset):
            raise TypeError(f"`map_func` of {what} must return a Dataset object.")
        return traced

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None) -> Dataset:
        """Shuffles through a buffer of `buffer_size` elements. With a `seed` (or a graph
        seed) the order is deterministic; each epoch reshuffles unless told otherwise."""
        seed, seed2 = _seeds(self._variant_tensor.graph, seed)
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._derive("ShuffleDataset", _i64(buffer_size), _i64(seed), _i64(seed2),
                            reshuffle_each_iteration=reshuffle)

    def prefetch(self, buffer_size) -> Dataset:
        """Produces elements ahead on a background thread (at most `buffer_size` queued;
        AUTOTUNE: 2). The thread stops when its iterator or session closes."""
        return self._derive("PrefetchDataset", _i64(buffer_size))

    def cache(self, filename="") -> Dataset:
        """Caches the elements after the first complete pass: in memory, or in `filename`
        (kept across sessions and processes, as TF's file cache)."""
        return self._derive("CacheDataset", convert_to_tensor(filename, dtype=dtypes.string))

    def shard(self, num_shards, index) -> Dataset:
        """Every `num_shards`-th element starting at `index`."""
        return self._derive("ShardDataset", _i64(num_shards), _i64(index))

    def unbatch(self) -> Dataset:
        """Splits each element's components along their first dimension."""
        structure = nest.map_structure(
            lambda s: Spec(s.dtype, TensorShape(None) if s.shape.ndims is None
                           else TensorShape(s.shape.as_tuple()[1:])), self._structure)
        return self._derive("UnbatchDataset", structure=structure)

    def concatenate(self, dataset) -> Dataset:
        """This dataset's elements followed by `dataset`'s (same types required)."""
        a, b = nest.flatten(self._structure), nest.flatten(dataset._structure)
        if [s.dtype for s in a] != [s.dtype for s in b]:
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{self.output_types} and {dataset.output_types}")
        structure = nest.pack(self._structure, [Spec(x.dtype, _common_shape(x.shape, y.shape))
                                                for x, y in zip(a, b)])
        return self._derive("ConcatenateDataset", dataset._variant_tensor, structure=structure)

    @staticmethod
    def zip(datasets) -> Dataset:
        """Elements of the datasets side by side (a tuple or dict of datasets); stops at the
        shortest."""
        flat = nest.flatten(datasets)
        structure = nest.pack(datasets, [d._structure for d in flat])
        specs = [s for d in flat for s in nest.flatten(d._structure)]
        v = apply_op("ZipDataset", [d._variant_tensor for d in flat],
                     output_types=[s.dtype for s in specs],
                     output_shapes=[s.shape for s in specs])
        return Dataset(v, structure)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None,
                     drop_remainder=False) -> Dataset:
        """Batches elements padded to `padded_shapes` (None / -1 dimensions: the batch's
        longest) with `padding_values` (default 0, or b"" for strings)."""
        flat = nest.flatten(self._structure)
        shapes = _flat_like(self._structure, padded_shapes)
        pads = _flat_like(self._structure, padding_values) if padding_values is not None \
            else [None] * len(flat)
        shape_ts = [convert_to_tensor(np.array([-1 if d is None else d for d in
                                                TensorShape(s).as_tuple()], np.int64))
                    for s in shapes]
        pad_ts = [convert_to_tensor(_default_pad(sp.dtype) if p is None else p, dtype=sp.dtype)
                  for p, sp in zip(pads, flat)]
        dim = batch_size if drop_remainder and isinstance(batch_size, int) else None
        structure = nest.pack(self._structure, [
            Spec(sp.dtype, TensorShape([dim]).concatenate(TensorShape(s)))
            for sp, s in zip(flat, shapes)])
        out = nest.flatten(structure)
        v = apply_op("PaddedBatchDatasetV2", self._variant_tensor, _i64(batch_size), shape_ts,
                     pad_ts, _bool(drop_remainder), output_shapes=[s.shape for s in out])
        return Dataset(v, structure)

    # -- iterators --------------------------------------------------------------------------
    def with_options(self, options) -> Dataset:
        """This dataset with `options` (a `tf.data.Options`) attached."""
        from tensorweave.data.transforms.experimental import with_options

        return with_options(self, options)

    def options(self):
        """The `tf.data.Options` attached to this dataset (empty ones when none were)."""
        from tensorweave.data.transforms.experimental import Options

        return getattr(self, "_options", None) or Options()

    def make_one_shot_iterator(self):
        from tensorweave.data.iterator import make_one_shot_iterator

        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        from tensorweave.data.iterator import make_initializable_iterator

        return make_initializable_iterator(self, shared_name)


def _flat_like(structure, value) -> list:
    """`value` flattened along `structure` (a single leaf structure takes `value` whole)."""
    if not nest.is_nested(structure):
        return [value]
    return nest.flatten(value if not isinstance(value, list) else tuple(value))


def _default_pad(dtype):
    return b"" if dtype == dtypes.string else np.zeros((), dtype.np_dtype)


def _common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    ta, tb = a.as_tuple(), b.as_tuple()
    if ta is None or tb is None or len(ta) != len(tb):
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(ta, tb)])


def _seeds(graph, op_seed) -> tuple[int, int]:
    """TF's get_seed: (graph seed, op seed); none set: (0, 0), nondeterministic."""
    graph_seed = graph.seed
    if graph_seed is None and op_seed is None:
        return 0, 0
    if graph_seed is None:
        return 87654321, int(op_seed)
    if op_seed is None:
        return int(graph_seed), int(getattr(graph, "_last_op_seed", 0))
    return int(graph_seed), int(op_seed)


def _i64(x):
    return x if hasattr(x, "dtype") and hasattr(x, "op") else convert_to_tensor(
        np.int64(x))


def _bool(x):
    return x if hasattr(x, "dtype") and hasattr(x, "op") else convert_to_tensor(bool(x))


__all__ = ["Dataset", "AUTOTUNE"]
