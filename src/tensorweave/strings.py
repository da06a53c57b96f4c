"""`tf.strings`."""

from tensorweave.ops.parsing_ops import string_to_number as to_number
from tensorweave.ops.io_ops import string_join as join
from tensorweave.ops.logging_ops import string_format as format  # noqa: F401, A001
from tensorweave.ops.string_ops import (  # noqa: F401
    as_string, reduce_join, regex_full_match, regex_replace, string_length as length,
    string_lower as lower, string_strip as strip, string_upper as upper, strings_split as split,
    substr,
)
from tensorweave.ops.string_hash_ops import string_to_hash_bucket as to_hash_bucket
from tensorweave.ops.string_hash_ops import string_to_hash_bucket_fast as to_hash_bucket_fast
from tensorweave.ops.string_hash_ops import (
    string_to_hash_bucket_strong as to_hash_bucket_strong,
)
from tensorweave.ops.unicode_ops import (  # noqa: F401, E402
    unicode_decode, unicode_decode_with_offsets, unicode_encode, unicode_split,
    unicode_split_with_offsets, unicode_transcode,
)
