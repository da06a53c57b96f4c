"""Run with the TensorFlow peer: loads a SavedModel with TF's compat.v1 loader and runs one
signature. `python tf_run_saved_model.py EXPORT_DIR SIGNATURE INPUTS.npz OUTPUTS.npz`
(inputs keyed by the signature's input keys; outputs written keyed by its output keys)."""

import sys

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1


def main(export_dir, signature, inputs_path, outputs_path):
    v1.disable_v2_behavior()
    inputs = dict(np.load(inputs_path, allow_pickle=False))
    with v1.Graph().as_default(), v1.Session() as sess:
        meta = v1.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def[signature]
        feeds = {sig.inputs[k].name: v for k, v in inputs.items()}
        names = sorted(sig.outputs)
        values = sess.run([sig.outputs[k].name for k in names], feeds)
    np.savez(outputs_path, **dict(zip(names, values)))


if __name__ == "__main__":
    main(*sys.argv[1:5])
