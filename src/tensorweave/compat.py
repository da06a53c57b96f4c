"""`tf.compat.v1`: tensorweave's namespace is TF1's, so `v1` is tensorweave itself."""

import tensorweave as v1  # noqa: F401
