"""`_Send` / `_Recv`: the pair the partitioner puts on a cross-device edge."""

from tensorweave.ops.registry import register_op

_ATTRS = ["tensor_name: string", "send_device: string", "send_device_incarnation: int",
          "recv_device: string", "client_terminated: bool = false"]

register_op("_Send", inputs=["tensor: T"], attrs=["T: type"] + _ATTRS, stateful=True)
register_op("_Recv", outputs=["tensor: tensor_type"], attrs=["tensor_type: type"] + _ATTRS,
            stateful=True)
register_op("_HostSend", inputs=["tensor: T"], attrs=["T: type"] + _ATTRS, stateful=True)
register_op("_HostRecv", outputs=["tensor: tensor_type"], attrs=["tensor_type: type"] + _ATTRS,
            stateful=True)
