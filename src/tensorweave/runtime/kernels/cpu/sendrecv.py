"""`_Send`/`_Recv` kernels: move a tensor through the step's rendezvous.

Inside a loop the key carries the executor's (frame, iteration), so every iteration has its
own channel. A dead value travels as dead (the executor runs these kernels on dead inputs).
"""

from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.runtime.rendezvous import make_key
from tensorweave.runtime.step import DEAD


def _key_parts(node):
    return (node.attr("send_device"), int(node.attr("send_device_incarnation")),
            node.attr("recv_device"), node.attr("tensor_name"))


@register_kernel("_Send", context=True)
@register_kernel("_HostSend", context=True)
def _send(node):
    src, inc, dst, name = _key_parts(node)

    def run(ctx, value):
        key = make_key(src, inc, dst, name, ctx.frame_id, ctx.iter_id)
        ctx.rendezvous.send(key, value, value is DEAD)

    return run


@register_kernel("_Recv", context=True)
@register_kernel("_HostRecv", context=True)
def _recv(node):
    src, inc, dst, name = _key_parts(node)

    def key_for(ctx) -> str:
        return make_key(src, inc, dst, name, ctx.frame_id, ctx.iter_id)

    def run(ctx):
        value, dead = ctx.rendezvous.recv(key_for(ctx), ctx.deadline)
        return DEAD if dead else value

    run.key_for = key_for  # NOTE: lets an executor wait for whichever recv arrives first
    return run
