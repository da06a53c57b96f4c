"""`tf.io`: records, Example parsing, file access, graph files."""

from tensorweave.data import gfile
from tensorweave.formats.example import (
    FixedLenFeature, FixedLenSequenceFeature, SparseFeature, VarLenFeature,
)
from tensorweave.formats.tfrecord import (
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator,
)
from tensorweave.ops.parsing_ops import (
    decode_base64, decode_csv, decode_raw, encode_base64, parse_example, parse_single_example,
    read_file, write_file,
)
from tensorweave.training.graph_io import write_graph
from tensorweave.ops.image_codec_ops import (  # noqa: E402
    decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png,
    extract_jpeg_shape,
)
from tensorweave.data.readers import FixedLengthRecordReader  # noqa: E402
