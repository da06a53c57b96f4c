"""`XlaLaunch`: a cluster of ops run as one XLA executable (TF's op name, inputs and attrs).

The master's mark_for_compilation pass creates it; `function` names the cluster's
FunctionDef in the graph's library (its `_Arg`s are `args`, its `_Retval`s `results`). As in
TF it is stateful (never folded, merged or pruned for being unused) and has no gradient: it
is made after the gradients are built. `constants` and `resources` stay empty here: constants
are copied into the function, and resource ops are not clustered.
"""

from tensorweave.ops.common_shapes import unknown
from tensorweave.ops.registry import register_op

register_op("XlaLaunch",
            inputs=["constants: Tconstants", "args: Targs", "resources: Nresources * resource"],
            outputs=["results: Tresults"],
            attrs=["Tconstants: list(type) >= 0", "Targs: list(type) >= 0",
                   "Nresources: int >= 0", "Tresults: list(type) >= 0", "function: func"],
            stateful=True, shape_fn=unknown)
