"""`tf.keras.preprocessing`: sequence padding and text tokenizing."""

from tensorweave.keras.preprocessing import sequence, text

__all__ = ["sequence", "text"]
