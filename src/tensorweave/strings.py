"""`tf.strings`."""

from tensorweave.ops.parsing_ops import string_to_number as to_number
from tensorweave.ops.io_ops import string_join as join
from tensorweave.ops.string_hash_ops import as_string
from tensorweave.ops.string_hash_ops import string_to_hash_bucket as to_hash_bucket
from tensorweave.ops.string_hash_ops import string_to_hash_bucket_fast as to_hash_bucket_fast
from tensorweave.ops.string_hash_ops import (
    string_to_hash_bucket_strong as to_hash_bucket_strong,
)
