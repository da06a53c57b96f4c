"""`tf.data.experimental`."""

from tensorweave.data.dataset import AUTOTUNE  # noqa: F401
from tensorweave.data.transforms.csv import make_csv_dataset  # noqa: F401
from tensorweave.data.transforms.experimental import (  # noqa: F401
    CsvDataset,
    Options,
    bucket_by_sequence_length,
    get_single_element,
    group_by_window,
    ignore_errors,
    map_and_batch,
    parallel_interleave,
    scan,
)
