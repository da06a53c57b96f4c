"""TensorFlow's checkpoint V2 format: the `.index` table, data shards, the `checkpoint` state
file. `bundle.py` reads and writes one checkpoint; `table.py` is the index's sorted-table
format; `strings.py` the layout of string tensors; `state.py` the state file; `crc.py` the
(masked) CRC-32C checksums."""

from tensorweave.formats.checkpoint.bundle import (  # noqa: F401
    BundleReader,
    BundleWriter,
    data_filename,
    index_filename,
    merge_bundles,
    normalize_prefix,
)
from tensorweave.formats.checkpoint.state import (  # noqa: F401
    CheckpointState,
    checkpoint_exists,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    meta_graph_filename,
    remove_checkpoint,
    update_checkpoint_state,
)
