"""`tf.python_io` (TF1): TFRecord files."""

from tensorweave.data.tfrecord import (
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator,
)
