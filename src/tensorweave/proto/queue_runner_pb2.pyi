from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class QueueRunnerDef(_message.Message):
    __slots__ = ("queue_name", "enqueue_op_name", "close_op_name", "cancel_op_name", "queue_closed_exception_types")
    class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OK: _ClassVar[QueueRunnerDef.ErrorCode]
        CANCELLED: _ClassVar[QueueRunnerDef.ErrorCode]
        UNKNOWN: _ClassVar[QueueRunnerDef.ErrorCode]
        INVALID_ARGUMENT: _ClassVar[QueueRunnerDef.ErrorCode]
        DEADLINE_EXCEEDED: _ClassVar[QueueRunnerDef.ErrorCode]
        NOT_FOUND: _ClassVar[QueueRunnerDef.ErrorCode]
        ALREADY_EXISTS: _ClassVar[QueueRunnerDef.ErrorCode]
        PERMISSION_DENIED: _ClassVar[QueueRunnerDef.ErrorCode]
        RESOURCE_EXHAUSTED: _ClassVar[QueueRunnerDef.ErrorCode]
        FAILED_PRECONDITION: _ClassVar[QueueRunnerDef.ErrorCode]
        ABORTED: _ClassVar[QueueRunnerDef.ErrorCode]
        OUT_OF_RANGE: _ClassVar[QueueRunnerDef.ErrorCode]
        UNIMPLEMENTED: _ClassVar[QueueRunnerDef.ErrorCode]
        INTERNAL: _ClassVar[QueueRunnerDef.ErrorCode]
        UNAVAILABLE: _ClassVar[QueueRunnerDef.ErrorCode]
        DATA_LOSS: _ClassVar[QueueRunnerDef.ErrorCode]
        UNAUTHENTICATED: _ClassVar[QueueRunnerDef.ErrorCode]
    OK: QueueRunnerDef.ErrorCode
    CANCELLED: QueueRunnerDef.ErrorCode
    UNKNOWN: QueueRunnerDef.ErrorCode
    INVALID_ARGUMENT: QueueRunnerDef.ErrorCode
    DEADLINE_EXCEEDED: QueueRunnerDef.ErrorCode
    NOT_FOUND: QueueRunnerDef.ErrorCode
    ALREADY_EXISTS: QueueRunnerDef.ErrorCode
    PERMISSION_DENIED: QueueRunnerDef.ErrorCode
    RESOURCE_EXHAUSTED: QueueRunnerDef.ErrorCode
    FAILED_PRECONDITION: QueueRunnerDef.ErrorCode
    ABORTED: QueueRunnerDef.ErrorCode
    OUT_OF_RANGE: QueueRunnerDef.ErrorCode
    UNIMPLEMENTED: QueueRunnerDef.ErrorCode
    INTERNAL: QueueRunnerDef.ErrorCode
    UNAVAILABLE: QueueRunnerDef.ErrorCode
    DATA_LOSS: QueueRunnerDef.ErrorCode
    UNAUTHENTICATED: QueueRunnerDef.ErrorCode
    QUEUE_NAME_FIELD_NUMBER: _ClassVar[int]
    ENQUEUE_OP_NAME_FIELD_NUMBER: _ClassVar[int]
    CLOSE_OP_NAME_FIELD_NUMBER: _ClassVar[int]
    CANCEL_OP_NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_CLOSED_EXCEPTION_TYPES_FIELD_NUMBER: _ClassVar[int]
    queue_name: str
    enqueue_op_name: _containers.RepeatedScalarFieldContainer[str]
    close_op_name: str
    cancel_op_name: str
    queue_closed_exception_types: _containers.RepeatedScalarFieldContainer[QueueRunnerDef.ErrorCode]
    def __init__(self, queue_name: _Optional[str] = ..., enqueue_op_name: _Optional[_Iterable[str]] = ..., close_op_name: _Optional[str] = ..., cancel_op_name: _Optional[str] = ..., queue_closed_exception_types: _Optional[_Iterable[_Union[QueueRunnerDef.ErrorCode, str]]] = ...) -> None: ...
