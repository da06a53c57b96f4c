"""`tf.xla`: `tf.xla.experimental.jit_scope` (framework/jit.py)."""

import types

from tensorweave.framework.jit import experimental_jit_scope

experimental = types.SimpleNamespace(jit_scope=experimental_jit_scope)

__all__ = ["experimental"]
