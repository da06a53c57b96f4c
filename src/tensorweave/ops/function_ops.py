"""`_Arg` and `_Retval`: how a partition receives feeds and returns fetches."""

from tensorweave.ops.registry import register_op

register_op("_Arg", outputs=["output: T"], attrs=["T: type", "index: int >= 0"],
            stateful=True)
register_op("_Retval", inputs=["input: T"], attrs=["T: type", "index: int >= 0"],
            stateful=True)
