"""`tf.python_io` (TF1): TFRecord files."""

from tensorweave.formats.tfrecord import (
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator,
)
