"""`tf.nest` (and `tf.contrib.framework.nest`): nested structures of lists, tuples,
namedtuples and dicts (dict entries by sorted key)."""

from tensorweave.ops.control_flow_util import (  # noqa: F401
    assert_same_structure, flatten, is_sequence, map_structure, pack_sequence_as,
)

is_nested = is_sequence
