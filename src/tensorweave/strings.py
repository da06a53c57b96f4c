"""`tf.strings`."""

from tensorweave.ops.parsing_ops import string_to_number as to_number
