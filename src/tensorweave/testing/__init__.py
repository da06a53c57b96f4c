"""What `tf.test` is made of: the TF1 `TestCase` (case.py) and the module-level helpers
(helpers.py)."""
