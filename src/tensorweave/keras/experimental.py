"""`tf.keras.experimental` (TF 1.14-1.15): SavedModel export and load of Keras models."""

from tensorweave.keras.saving import export_saved_model, load_model

load_from_saved_model = load_model

__all__ = ["export_saved_model", "load_from_saved_model"]
