"""`tf.profiler.ProfileOptionBuilder`: the option dicts of `tf.profiler.profile`, with TF's
keys, defaults and three ready-made sets (parameters, float operations, time and memory)."""

from __future__ import annotations

import copy

_DEFAULT = {"max_depth": 100, "min_bytes": 0, "min_micros": 0, "min_params": 0,
            "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
            "account_type_regexes": [".*"], "start_name_regexes": [".*"],
            "trim_name_regexes": [], "show_name_regexes": [".*"], "hide_name_regexes": [],
            "account_displayed_op_only": False, "select": ["micros"], "step": -1,
            "output": "stdout"}


def _preset(**changes) -> dict:
    out = {"max_depth": 10000, "min_bytes": 0, "min_micros": 0, "min_params": 0,
           "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
           "account_type_regexes": [".*"], "start_name_regexes": [".*"],
           "trim_name_regexes": [], "show_name_regexes": [".*"], "hide_name_regexes": [],
           "account_displayed_op_only": True, "select": [], "step": -1, "output": "stdout"}
    out.update(changes)
    return out


class ProfileOptionBuilder:
    """Builds an options dict: `ProfileOptionBuilder(base).with_max_depth(3).select(
    ["params"]).build()`; each `with_*` returns the builder."""

    def __init__(self, options=None):
        self._options = copy.deepcopy(options if options is not None else _DEFAULT)

    @staticmethod
    def trainable_variables_parameter() -> dict:
        """Counts the parameters of trainable variables, by name scope."""
        return _preset(account_type_regexes=["_trainable_variables"], select=["params"])

    @staticmethod
    def float_operation() -> dict:
        """Counts the float operations of ops with a known flops statistic."""
        return _preset(min_float_ops=1, order_by="float_ops", select=["float_ops"])

    @staticmethod
    def time_and_memory(min_micros=1, min_bytes=1, min_accelerator_micros=0,
                        min_cpu_micros=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0) -> dict:
        """Shows ops by execution time (from RunMetadata) and memory."""
        return _preset(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                       min_residual_bytes=min_residual_bytes, min_output_bytes=min_output_bytes,
                       min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                       min_cpu_micros=min_cpu_micros, order_by="micros",
                       select=["micros", "bytes"])

    def build(self) -> dict:
        return copy.deepcopy(self._options)

    def _set(self, **kv) -> ProfileOptionBuilder:
        self._options.update(kv)
        return self

    def with_max_depth(self, max_depth):
        return self._set(max_depth=max_depth)

    def with_min_memory(self, min_bytes=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0):
        return self._set(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                         min_residual_bytes=min_residual_bytes,
                         min_output_bytes=min_output_bytes)

    def with_min_execution_time(self, min_micros=0, min_accelerator_micros=0,
                                min_cpu_micros=0):
        return self._set(min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                         min_cpu_micros=min_cpu_micros)

    def with_min_parameters(self, min_params):
        return self._set(min_params=min_params)

    def with_min_occurrence(self, min_occurrence):
        return self._set(min_occurrence=min_occurrence)

    def with_min_float_operations(self, min_float_ops):
        return self._set(min_float_ops=min_float_ops)

    def with_accounted_types(self, account_type_regexes):
        return self._set(account_type_regexes=copy.copy(account_type_regexes))

    def with_node_names(self, start_name_regexes=None, show_name_regexes=None,
                        hide_name_regexes=None, trim_name_regexes=None):
        for key, value in (("start_name_regexes", start_name_regexes),
                           ("show_name_regexes", show_name_regexes),
                           ("hide_name_regexes", hide_name_regexes),
                           ("trim_name_regexes", trim_name_regexes)):
            if value is not None:
                self._options[key] = copy.copy(value)
        return self

    def account_displayed_op_only(self, is_true):
        return self._set(account_displayed_op_only=bool(is_true))

    def with_empty_output(self):
        return self._set(output="none")

    def with_stdout_output(self):
        return self._set(output="stdout")

    def with_file_output(self, outfile):
        return self._set(output=f"file:outfile={outfile}")

    def with_timeline_output(self, timeline_file):
        return self._set(output=f"timeline:outfile={timeline_file}")

    def with_pprof_output(self, pprof_file):
        return self._set(output=f"pprof:outfile={pprof_file}")

    def order_by(self, attribute):
        return self._set(order_by=attribute)

    def select(self, attributes):
        return self._set(select=copy.copy(attributes))

    def with_step(self, step):
        return self._set(step=step)


__all__ = ["ProfileOptionBuilder"]
