"""`tf.strings`."""

from tensorweave.ops.parsing_ops import string_to_number as to_number
from tensorweave.ops.io_ops import string_join as join
