"""`tf.keras.preprocessing.sequence.pad_sequences`."""

from __future__ import annotations

import numpy as np


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0) -> np.ndarray:
    """Sequences as one (n, maxlen) array: longer ones cut (at the front with
    truncating="pre"), shorter ones filled with `value` (in front with padding="pre").

    Raises:
      ValueError: an unknown padding or truncating mode.
    """
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(f'Padding type "{padding}" / truncating type "{truncating}" not '
                         'understood')
    seqs = [list(s) for s in sequences]
    maxlen = maxlen if maxlen is not None else max((len(s) for s in seqs), default=0)
    out = np.full((len(seqs), maxlen), value, dtype=dtype)
    for i, s in enumerate(seqs):
        if not s:
            continue
        kept = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, maxlen - len(kept):] = kept
    return out
