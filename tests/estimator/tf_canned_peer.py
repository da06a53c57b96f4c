"""Run by test_canned_interop.py with the TensorFlow peer: `restore KIND DIR OUT` restores
tensorweave's checkpoint in DIR into the hand-built TF graph of canned_model.py and writes
its logits to OUT; `write KIND DIR OUT` initializes that graph (seeded), saves a checkpoint
with a global step into DIR, and writes its logits."""

import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import canned_model  # noqa: E402

v1 = tf.compat.v1


def main(mode, kind, model_dir, out):
    v1.disable_eager_execution()
    v1.set_random_seed(7)
    feats = {k: tf.constant(v) for k, v in canned_model.FEATURES.items()}
    logits = canned_model.logits_graph(v1, kind, feats)
    step = v1.train.get_or_create_global_step()
    saver = v1.train.Saver(v1.global_variables())
    with v1.Session() as sess:
        sess.run(v1.tables_initializer())
        if mode == "restore":
            model_vars = [v for v in v1.global_variables()]
            v1.train.Saver(model_vars).restore(sess, v1.train.latest_checkpoint(model_dir))
        else:
            sess.run(v1.global_variables_initializer())
            sess.run(step.assign(17))
            saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=17)
        np.save(out, sess.run(logits))


if __name__ == "__main__":
    main(*sys.argv[1:5])
