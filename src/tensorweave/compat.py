"""`tf.compat.v1`: tensorweave's namespace is TF1's, so `v1` is tensorweave itself.

The package root sets `v1` when it imports this module (so this module need not import the
root, which would make the two import each other).
"""

v1 = None  # set to the tensorweave module by tensorweave/__init__.py
