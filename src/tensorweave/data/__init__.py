"""`tf.data`: datasets and iterators in graph mode; also the record reader (`tfrecord`),
`tf.train.Example` protos and feature configs (`example`) and `tf.io.gfile` (`gfile`).

The submodules `tfrecord`, `example` and `gfile` import nothing from here, so the names below
load lazily (`__getattr__`) to keep `import tensorweave.formats.tfrecord` light.
"""

_NAMES = {
    "Dataset": "tensorweave.data.dataset",
    "Iterator": "tensorweave.data.iterator",
    "TFRecordDataset": "tensorweave.data.transforms.readers",
    "TextLineDataset": "tensorweave.data.transforms.readers",
    "FixedLengthRecordDataset": "tensorweave.data.transforms.readers",
    "make_one_shot_iterator": "tensorweave.data.iterator",
    "make_initializable_iterator": "tensorweave.data.iterator",
    "Options": "tensorweave.data.transforms.experimental",
    "get_output_types": "tensorweave.data.transforms.experimental",
    "get_output_shapes": "tensorweave.data.transforms.experimental",
    "get_output_classes": "tensorweave.data.transforms.experimental",
}


def __getattr__(name):
    import importlib

    if name == "experimental":
        return importlib.import_module("tensorweave.data.experimental_api")
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'tensorweave.data' has no attribute {name!r}")
