"""`tf.strings`."""

from tensorweave.ops.parsing_ops import string_to_number as to_number
from tensorweave.ops.io_ops import string_join as join
from tensorweave.ops.logging_ops import string_format as format  # noqa: F401, A001
