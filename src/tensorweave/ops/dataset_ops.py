"""Dataset and iterator op registrations (TF's names, inputs and attrs).

A dataset op outputs a scalar `variant` holding a runtime dataset object (see
`runtime/kernels/cpu/dataset.py`); iterator ops output a `resource` holding iterator state.
All are stateful so no pass folds or deduplicates them. The Python API is in `data/`.
"""

from __future__ import annotations

import weakref

from tensorweave.ops.registry import register_op
from tensorweave.ops.script_ops import FuncRegistry

_OUT = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_FN = ["f: func", "Targuments: list(type) >= 0"]


def _scalar(ctx):
    return [()]


OP_TYPES: list[str] = []   # every op type this module registers (for the test harness)


def _register(name, **kw):
    OP_TYPES.append(name)
    register_op(name, **kw)


def _ds(name, inputs, attrs=()):
    _register(name, inputs=list(inputs), outputs=["handle: variant"],
                attrs=list(attrs), shape_fn=_scalar, stateful=True)


_ds("TensorSliceDataset", ["components: Toutput_types"],
    ["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1"])
_ds("TensorDataset", ["components: Toutput_types"],
    ["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1"])
_ds("RangeDataset", ["start: int64", "stop: int64", "step: int64"], _OUT)
_ds("MapDataset", ["input_dataset: variant", "other_arguments: Targuments"],
    _FN + _OUT + ["use_inter_op_parallelism: bool = true",
                  "preserve_cardinality: bool = false"])
_ds("ParallelMapDataset", ["input_dataset: variant", "other_arguments: Targuments",
                           "num_parallel_calls: int32"],
    _FN + _OUT + ["use_inter_op_parallelism: bool = true", "sloppy: bool = false",
                  "preserve_cardinality: bool = false"])
_ds("BatchDatasetV2", ["input_dataset: variant", "batch_size: int64", "drop_remainder: bool"],
    ["parallel_copy: bool = false"] + _OUT)
_ds("RepeatDataset", ["input_dataset: variant", "count: int64"], _OUT)
_ds("TakeDataset", ["input_dataset: variant", "count: int64"], _OUT)
_ds("SkipDataset", ["input_dataset: variant", "count: int64"], _OUT)
_ds("ShuffleDataset", ["input_dataset: variant", "buffer_size: int64", "seed: int64",
                      "seed2: int64"], ["reshuffle_each_iteration: bool = true"] + _OUT)
_ds("PrefetchDataset", ["input_dataset: variant", "buffer_size: int64"],
    _OUT + ["slack_period: int = 0", "legacy_autotune: bool = true"])
_ds("FilterDataset", ["input_dataset: variant", "other_arguments: Targuments"],
    ["predicate: func", "Targuments: list(type) >= 0"] + _OUT)
_ds("ZipDataset", ["input_datasets: N * variant"], _OUT + ["N: int >= 1"])
_ds("ConcatenateDataset", ["input_dataset: variant", "another_dataset: variant"], _OUT)
# -- tf.data.experimental (data/transforms/experimental.py) ----------------------------------
_ds("ScanDataset", ["input_dataset: variant", "initial_state: Tstate",
                    "other_arguments: Targuments"],
    ["f: func", "Tstate: list(type) >= 1", "Targuments: list(type) >= 0"] + _OUT
    + ["preserve_cardinality: bool = false", "use_default_device: bool = true"])
_ds("CSVDataset", ["filenames: string", "compression_type: string", "buffer_size: int64",
                   "header: bool", "field_delim: string", "use_quote_delim: bool",
                   "na_value: string", "select_cols: int64", "record_defaults: output_types"],
    ["output_types: list({float, double, int32, int64, string}) >= 1",
     "output_shapes: list(shape) >= 1"])


_ds("GroupByWindowDataset", ["input_dataset: variant",
                             "key_func_other_arguments: Tkey_func_other_arguments",
                             "reduce_func_other_arguments: Treduce_func_other_arguments",
                             "window_size_func_other_arguments: "
                             "Twindow_size_func_other_arguments"],
    ["key_func: func", "reduce_func: func", "window_size_func: func",
     "Tkey_func_other_arguments: list(type) >= 0",
     "Treduce_func_other_arguments: list(type) >= 0",
     "Twindow_size_func_other_arguments: list(type) >= 0"] + _OUT)


def _single_element_shape(ctx):
    return list(ctx.attr("output_shapes"))


OP_TYPES.append("DatasetToSingleElement")
register_op("DatasetToSingleElement", inputs=["dataset: variant"],
            outputs=["components: output_types"], attrs=_OUT + ["metadata: string = ''"],
            shape_fn=_single_element_shape, stateful=True)
_ds("FlatMapDataset", ["input_dataset: variant", "other_arguments: Targuments"], _FN + _OUT)
_ds("InterleaveDataset", ["input_dataset: variant", "other_arguments: Targuments",
                          "cycle_length: int64", "block_length: int64"], _FN + _OUT)
_ds("PaddedBatchDatasetV2", ["input_dataset: variant", "batch_size: int64",
                             "padded_shapes: N * int64", "padding_values: Toutput_types",
                             "drop_remainder: bool"],
    ["parallel_copy: bool = false", "Toutput_types: list(type) >= 1",
     "output_shapes: list(shape) >= 1", "N: int >= 1"])
_ds("CacheDataset", ["input_dataset: variant", "filename: string"], _OUT)
_ds("ShardDataset", ["input_dataset: variant", "num_shards: int64", "index: int64"],
    ["require_non_empty: bool = false"] + _OUT)
_ds("UnbatchDataset", ["input_dataset: variant"], _OUT)
_READER = ["filenames: string", "compression_type: string", "buffer_size: int64"]
_ds("TFRecordDataset", _READER)
_ds("TextLineDataset", _READER)
_ds("FixedLengthRecordDatasetV2", ["filenames: string", "header_bytes: int64",
                                   "record_bytes: int64", "footer_bytes: int64",
                                   "buffer_size: int64", "compression_type: string"])
_ds("IgnoreErrorsDataset", ["input_dataset: variant"], _OUT + ["log_warning: bool = false"])
# NOTE: local-only (the generator lives in this process, see `register_generator`); TF's
# GeneratorDataset calls traced init/next/finalize functions instead.
_ds("_PyGeneratorDataset", [], ["token: string"] + _OUT)

_register("IteratorV2", outputs=["handle: resource"],
            attrs=["shared_name: string", "container: string"] + _OUT,
            shape_fn=_scalar, stateful=True)
# NOTE: TF's OneShotIterator takes a dataset factory function; ours takes the dataset as an
# input and initializes itself on its first run (same behaviour, no function needed).
_register("_OneShotIterator", inputs=["dataset: variant"], outputs=["handle: resource"],
            attrs=["shared_name: string = ''", "container: string = ''"] + _OUT,
            shape_fn=_scalar, stateful=True)
_register("MakeIterator", inputs=["dataset: variant", "iterator: resource"], stateful=True)


def _get_next_shapes(ctx):
    return list(ctx.attr("output_shapes"))


_register("IteratorGetNext", inputs=["iterator: resource"], outputs=["components: output_types"],
            attrs=_OUT, shape_fn=_get_next_shapes, stateful=True)

_generators = FuncRegistry()


def register_generator(make, graph) -> str:
    """Registers `make` (a callable returning an iterator) for this process; the token is
    released when `graph` is garbage collected."""
    token = _generators.insert(make)
    weakref.finalize(graph, _generators.remove, token)
    return token


def lookup_generator(token: str):
    """The generator factory of `token`, or None when this process has none."""
    return _generators.get(token)


__all__: list[str] = []
