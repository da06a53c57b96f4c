"""`tf.contrib.compiler.jit.experimental_jit_scope`: TF 1.x's name of
`tf.xla.experimental.jit_scope` (framework/jit.py)."""

import types

from tensorweave.framework.jit import experimental_jit_scope

jit = types.SimpleNamespace(experimental_jit_scope=experimental_jit_scope)

__all__ = ["jit"]
