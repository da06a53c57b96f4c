"""`tf.data.experimental` transformations: `ignore_errors`."""

from __future__ import annotations

import itertools

from tensorweave.data.dataset import Dataset

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


__all__ = ["ignore_errors"]
