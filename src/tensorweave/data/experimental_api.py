"""`tf.data.experimental`."""

from tensorweave.data.dataset import AUTOTUNE  # noqa: F401
from tensorweave.data.transforms.csv import make_csv_dataset  # noqa: F401
from tensorweave.data.transforms.experimental import (  # noqa: F401
    CsvDataset,
    Options,
    get_single_element,
    ignore_errors,
    map_and_batch,
    parallel_interleave,
    scan,
)
