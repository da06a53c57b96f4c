"""Run with the TF peer (TF_USE_LEGACY_KERAS=1): builds the model of keras_interop_model(),
then either saves its (seeded) weights — `save DIR` — or loads ours and prints predictions —
`load DIR`. Used by test_weights_interop.py."""

import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tensorflow.compat.v1 as tf  # noqa: E402
from keras_cases import interop_model  # noqa: E402

tf.disable_v2_behavior()
mode, directory = sys.argv[1], Path(sys.argv[2])
model = interop_model(tf)
x = np.linspace(-1, 1, 4 * 6, dtype=np.float32).reshape(4, 6)
if mode == "save":
    rng = np.random.default_rng(3)
    model.set_weights([rng.standard_normal(w.shape).astype(np.float32)
                       for w in model.get_weights()])
    model.save_weights(str(directory / "tf.h5"))
    model.save_weights(str(directory / "tf_ckpt"))
else:
    model.load_weights(str(directory / sys.argv[3]))
print(json.dumps({"predict": model.predict(x).tolist()}))
