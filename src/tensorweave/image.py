"""`tf.image`: decoding and encoding, resizing, crops and pads, flips, colour, boxes and
measures (TF1 names). Re-exports only; the functions live in ops/image_*.py."""

