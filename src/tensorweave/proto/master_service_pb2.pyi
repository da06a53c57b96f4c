from tensorweave.proto import config_pb2 as _config_pb2
from tensorweave.proto import device_attributes_pb2 as _device_attributes_pb2
from tensorweave.proto import graph_pb2 as _graph_pb2
from tensorweave.proto import tensor_pb2 as _tensor_pb2
from tensorweave.proto import tensor_shape_pb2 as _tensor_shape_pb2
from tensorweave.proto import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SessionConfig(_message.Message):
    __slots__ = ("device_count", "intra_op_parallelism_threads", "device_filters", "inter_op_parallelism_threads", "allow_soft_placement", "log_device_placement", "graph_options", "operation_timeout_in_ms", "disabled_passes", "passes")
    class DeviceCountEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DEVICE_COUNT_FIELD_NUMBER: _ClassVar[int]
    INTRA_OP_PARALLELISM_THREADS_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FILTERS_FIELD_NUMBER: _ClassVar[int]
    INTER_OP_PARALLELISM_THREADS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_SOFT_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    LOG_DEVICE_PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    GRAPH_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    OPERATION_TIMEOUT_IN_MS_FIELD_NUMBER: _ClassVar[int]
    DISABLED_PASSES_FIELD_NUMBER: _ClassVar[int]
    PASSES_FIELD_NUMBER: _ClassVar[int]
    device_count: _containers.ScalarMap[str, int]
    intra_op_parallelism_threads: int
    device_filters: _containers.RepeatedScalarFieldContainer[str]
    inter_op_parallelism_threads: int
    allow_soft_placement: bool
    log_device_placement: bool
    graph_options: _config_pb2.GraphOptions
    operation_timeout_in_ms: int
    disabled_passes: _containers.RepeatedScalarFieldContainer[str]
    passes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, device_count: _Optional[_Mapping[str, int]] = ..., intra_op_parallelism_threads: _Optional[int] = ..., device_filters: _Optional[_Iterable[str]] = ..., inter_op_parallelism_threads: _Optional[int] = ..., allow_soft_placement: _Optional[bool] = ..., log_device_placement: _Optional[bool] = ..., graph_options: _Optional[_Union[_config_pb2.GraphOptions, _Mapping]] = ..., operation_timeout_in_ms: _Optional[int] = ..., disabled_passes: _Optional[_Iterable[str]] = ..., passes: _Optional[_Iterable[str]] = ...) -> None: ...

class NodeOutputShapes(_message.Message):
    __slots__ = ("shape",)
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    shape: _containers.RepeatedCompositeFieldContainer[_tensor_shape_pb2.TensorShapeProto]
    def __init__(self, shape: _Optional[_Iterable[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]]] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("graph_def", "config", "target", "output_shapes")
    class OutputShapesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: NodeOutputShapes
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[NodeOutputShapes, _Mapping]] = ...) -> None: ...
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SHAPES_FIELD_NUMBER: _ClassVar[int]
    graph_def: _graph_pb2.GraphDef
    config: SessionConfig
    target: str
    output_shapes: _containers.MessageMap[str, NodeOutputShapes]
    def __init__(self, graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., config: _Optional[_Union[SessionConfig, _Mapping]] = ..., target: _Optional[str] = ..., output_shapes: _Optional[_Mapping[str, NodeOutputShapes]] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session_handle", "graph_version")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_VERSION_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_version: int
    def __init__(self, session_handle: _Optional[str] = ..., graph_version: _Optional[int] = ...) -> None: ...

class ExtendSessionRequest(_message.Message):
    __slots__ = ("session_handle", "graph_def", "current_graph_version", "output_shapes")
    class OutputShapesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: NodeOutputShapes
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[NodeOutputShapes, _Mapping]] = ...) -> None: ...
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    CURRENT_GRAPH_VERSION_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SHAPES_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_def: _graph_pb2.GraphDef
    current_graph_version: int
    output_shapes: _containers.MessageMap[str, NodeOutputShapes]
    def __init__(self, session_handle: _Optional[str] = ..., graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., current_graph_version: _Optional[int] = ..., output_shapes: _Optional[_Mapping[str, NodeOutputShapes]] = ...) -> None: ...

class ExtendSessionResponse(_message.Message):
    __slots__ = ("new_graph_version",)
    NEW_GRAPH_VERSION_FIELD_NUMBER: _ClassVar[int]
    new_graph_version: int
    def __init__(self, new_graph_version: _Optional[int] = ...) -> None: ...

class ListDevicesRequest(_message.Message):
    __slots__ = ("session_handle",)
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    def __init__(self, session_handle: _Optional[str] = ...) -> None: ...

class ListDevicesResponse(_message.Message):
    __slots__ = ("local_device", "remote_device")
    LOCAL_DEVICE_FIELD_NUMBER: _ClassVar[int]
    REMOTE_DEVICE_FIELD_NUMBER: _ClassVar[int]
    local_device: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    remote_device: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    def __init__(self, local_device: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ..., remote_device: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ...) -> None: ...

class MakeCallableRequest(_message.Message):
    __slots__ = ("session_handle", "feed", "fetch", "target", "request_id")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    FEED_FIELD_NUMBER: _ClassVar[int]
    FETCH_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    feed: _containers.RepeatedScalarFieldContainer[str]
    fetch: _containers.RepeatedScalarFieldContainer[str]
    target: _containers.RepeatedScalarFieldContainer[str]
    request_id: int
    def __init__(self, session_handle: _Optional[str] = ..., feed: _Optional[_Iterable[str]] = ..., fetch: _Optional[_Iterable[str]] = ..., target: _Optional[_Iterable[str]] = ..., request_id: _Optional[int] = ...) -> None: ...

class MakeCallableResponse(_message.Message):
    __slots__ = ("handle", "feed_dtype")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    FEED_DTYPE_FIELD_NUMBER: _ClassVar[int]
    handle: int
    feed_dtype: _containers.RepeatedScalarFieldContainer[_types_pb2.DataType]
    def __init__(self, handle: _Optional[int] = ..., feed_dtype: _Optional[_Iterable[_Union[_types_pb2.DataType, str]]] = ...) -> None: ...

class RunCallableRequest(_message.Message):
    __slots__ = ("session_handle", "handle", "feed", "options", "has_options", "request_id")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    FEED_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    HAS_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    handle: int
    feed: _containers.RepeatedCompositeFieldContainer[_tensor_pb2.TensorProto]
    options: _config_pb2.RunOptions
    has_options: bool
    request_id: int
    def __init__(self, session_handle: _Optional[str] = ..., handle: _Optional[int] = ..., feed: _Optional[_Iterable[_Union[_tensor_pb2.TensorProto, _Mapping]]] = ..., options: _Optional[_Union[_config_pb2.RunOptions, _Mapping]] = ..., has_options: _Optional[bool] = ..., request_id: _Optional[int] = ...) -> None: ...

class RunCallableResponse(_message.Message):
    __slots__ = ("fetch", "metadata", "has_metadata")
    FETCH_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    HAS_METADATA_FIELD_NUMBER: _ClassVar[int]
    fetch: _containers.RepeatedCompositeFieldContainer[_tensor_pb2.TensorProto]
    metadata: _config_pb2.RunMetadata
    has_metadata: bool
    def __init__(self, fetch: _Optional[_Iterable[_Union[_tensor_pb2.TensorProto, _Mapping]]] = ..., metadata: _Optional[_Union[_config_pb2.RunMetadata, _Mapping]] = ..., has_metadata: _Optional[bool] = ...) -> None: ...

class ReleaseCallableRequest(_message.Message):
    __slots__ = ("session_handle", "handle")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    handle: int
    def __init__(self, session_handle: _Optional[str] = ..., handle: _Optional[int] = ...) -> None: ...

class ReleaseCallableResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CloseSessionRequest(_message.Message):
    __slots__ = ("session_handle",)
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    def __init__(self, session_handle: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("container", "device_filters")
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FILTERS_FIELD_NUMBER: _ClassVar[int]
    container: _containers.RepeatedScalarFieldContainer[str]
    device_filters: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, container: _Optional[_Iterable[str]] = ..., device_filters: _Optional[_Iterable[str]] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
