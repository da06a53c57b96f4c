"""Input data: TFRecord files (`tfrecord`), `tf.train.Example` protos and feature configs
(`example`), and local file access as `tf.io.gfile` (`gfile`).

tf.data datasets, iterators and the queue-based readers build on the record reader in
`tfrecord` (`RecordReader` yields `Record(data, offset, index)` one record at a time).
"""
