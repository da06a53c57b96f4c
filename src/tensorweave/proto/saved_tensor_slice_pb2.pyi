from tensorweave.proto import tensor_pb2 as _tensor_pb2
from tensorweave.proto import tensor_shape_pb2 as _tensor_shape_pb2
from tensorweave.proto import tensor_slice_pb2 as _tensor_slice_pb2
from tensorweave.proto import types_pb2 as _types_pb2
from tensorweave.proto import versions_pb2 as _versions_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SavedSliceMeta(_message.Message):
    __slots__ = ("name", "shape", "type", "slice")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SLICE_FIELD_NUMBER: _ClassVar[int]
    name: str
    shape: _tensor_shape_pb2.TensorShapeProto
    type: _types_pb2.DataType
    slice: _containers.RepeatedCompositeFieldContainer[_tensor_slice_pb2.TensorSliceProto]
    def __init__(self, name: _Optional[str] = ..., shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., type: _Optional[_Union[_types_pb2.DataType, str]] = ..., slice: _Optional[_Iterable[_Union[_tensor_slice_pb2.TensorSliceProto, _Mapping]]] = ...) -> None: ...

class SavedTensorSliceMeta(_message.Message):
    __slots__ = ("tensor", "versions")
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    tensor: _containers.RepeatedCompositeFieldContainer[SavedSliceMeta]
    versions: _versions_pb2.VersionDef
    def __init__(self, tensor: _Optional[_Iterable[_Union[SavedSliceMeta, _Mapping]]] = ..., versions: _Optional[_Union[_versions_pb2.VersionDef, _Mapping]] = ...) -> None: ...

class SavedSlice(_message.Message):
    __slots__ = ("name", "slice", "data")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SLICE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    name: str
    slice: _tensor_slice_pb2.TensorSliceProto
    data: _tensor_pb2.TensorProto
    def __init__(self, name: _Optional[str] = ..., slice: _Optional[_Union[_tensor_slice_pb2.TensorSliceProto, _Mapping]] = ..., data: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ...) -> None: ...

class SavedTensorSlices(_message.Message):
    __slots__ = ("meta", "data")
    META_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    meta: SavedTensorSliceMeta
    data: SavedSlice
    def __init__(self, meta: _Optional[_Union[SavedTensorSliceMeta, _Mapping]] = ..., data: _Optional[_Union[SavedSlice, _Mapping]] = ...) -> None: ...
