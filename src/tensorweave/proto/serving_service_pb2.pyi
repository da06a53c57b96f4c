from tensorweave.proto import serving_apis_pb2 as _serving_apis_pb2
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor
