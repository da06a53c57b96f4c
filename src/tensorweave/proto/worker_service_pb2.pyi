from tensorweave.proto import device_attributes_pb2 as _device_attributes_pb2
from tensorweave.proto import graph_pb2 as _graph_pb2
from tensorweave.proto import master_service_pb2 as _master_service_pb2
from tensorweave.proto import step_stats_pb2 as _step_stats_pb2
from tensorweave.proto import tensor_pb2 as _tensor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("device_attributes", "bulk_port")
    DEVICE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    BULK_PORT_FIELD_NUMBER: _ClassVar[int]
    device_attributes: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    bulk_port: int
    def __init__(self, device_attributes: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ..., bulk_port: _Optional[int] = ...) -> None: ...

class RegisterGraphRequest(_message.Message):
    __slots__ = ("session_handle", "graph_def", "device", "dataflow", "output_shapes")
    class OutputShapesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _master_service_pb2.NodeOutputShapes
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_master_service_pb2.NodeOutputShapes, _Mapping]] = ...) -> None: ...
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    DATAFLOW_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SHAPES_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_def: _graph_pb2.GraphDef
    device: str
    dataflow: bool
    output_shapes: _containers.MessageMap[str, _master_service_pb2.NodeOutputShapes]
    def __init__(self, session_handle: _Optional[str] = ..., graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., device: _Optional[str] = ..., dataflow: _Optional[bool] = ..., output_shapes: _Optional[_Mapping[str, _master_service_pb2.NodeOutputShapes]] = ...) -> None: ...

class RegisterGraphResponse(_message.Message):
    __slots__ = ("graph_handle",)
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    def __init__(self, graph_handle: _Optional[str] = ...) -> None: ...

class DeregisterGraphRequest(_message.Message):
    __slots__ = ("graph_handle", "session_handle")
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    session_handle: str
    def __init__(self, graph_handle: _Optional[str] = ..., session_handle: _Optional[str] = ...) -> None: ...

class DeregisterGraphResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ExecutorOpts(_message.Message):
    __slots__ = ("record_costs", "record_timeline", "record_partition_graphs", "timeout_in_ms")
    RECORD_COSTS_FIELD_NUMBER: _ClassVar[int]
    RECORD_TIMELINE_FIELD_NUMBER: _ClassVar[int]
    RECORD_PARTITION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_IN_MS_FIELD_NUMBER: _ClassVar[int]
    record_costs: bool
    record_timeline: bool
    record_partition_graphs: bool
    timeout_in_ms: int
    def __init__(self, record_costs: _Optional[bool] = ..., record_timeline: _Optional[bool] = ..., record_partition_graphs: _Optional[bool] = ..., timeout_in_ms: _Optional[int] = ...) -> None: ...

class RunGraphRequest(_message.Message):
    __slots__ = ("graph_handle", "step_id", "exec_opts", "session_handle", "request_id", "arg")
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    EXEC_OPTS_FIELD_NUMBER: _ClassVar[int]
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ARG_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    step_id: int
    exec_opts: ExecutorOpts
    session_handle: str
    request_id: int
    arg: _containers.RepeatedCompositeFieldContainer[_tensor_pb2.TensorProto]
    def __init__(self, graph_handle: _Optional[str] = ..., step_id: _Optional[int] = ..., exec_opts: _Optional[_Union[ExecutorOpts, _Mapping]] = ..., session_handle: _Optional[str] = ..., request_id: _Optional[int] = ..., arg: _Optional[_Iterable[_Union[_tensor_pb2.TensorProto, _Mapping]]] = ...) -> None: ...

class RunGraphResponse(_message.Message):
    __slots__ = ("step_stats", "has_step_stats", "retval")
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    HAS_STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    RETVAL_FIELD_NUMBER: _ClassVar[int]
    step_stats: _step_stats_pb2.StepStats
    has_step_stats: bool
    retval: _containers.RepeatedCompositeFieldContainer[_tensor_pb2.TensorProto]
    def __init__(self, step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ..., has_step_stats: _Optional[bool] = ..., retval: _Optional[_Iterable[_Union[_tensor_pb2.TensorProto, _Mapping]]] = ...) -> None: ...

class CleanupGraphRequest(_message.Message):
    __slots__ = ("step_id",)
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    def __init__(self, step_id: _Optional[int] = ...) -> None: ...

class CleanupGraphResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CleanupAllRequest(_message.Message):
    __slots__ = ("container",)
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    container: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, container: _Optional[_Iterable[str]] = ...) -> None: ...

class CleanupAllResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RecvTensorRequest(_message.Message):
    __slots__ = ("step_id", "rendezvous_key", "request_id")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    rendezvous_key: str
    request_id: int
    def __init__(self, step_id: _Optional[int] = ..., rendezvous_key: _Optional[str] = ..., request_id: _Optional[int] = ...) -> None: ...

class RecvTensorResponse(_message.Message):
    __slots__ = ("tensor", "is_dead", "send_start_micros", "raw", "total_bytes", "chunk")
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    IS_DEAD_FIELD_NUMBER: _ClassVar[int]
    SEND_START_MICROS_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    tensor: _tensor_pb2.TensorProto
    is_dead: bool
    send_start_micros: int
    raw: bool
    total_bytes: int
    chunk: bytes
    def __init__(self, tensor: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ..., is_dead: _Optional[bool] = ..., send_start_micros: _Optional[int] = ..., raw: _Optional[bool] = ..., total_bytes: _Optional[int] = ..., chunk: _Optional[bytes] = ...) -> None: ...
