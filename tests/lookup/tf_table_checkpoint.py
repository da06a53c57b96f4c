"""Run by test_table_checkpoint.py under the TensorFlow peer (or under tensorweave): builds
the same graph of two checkpointed MutableHashTables and a variable, then

    write PREFIX   fills them, saves with tf.train.Saver and prints {"prefix": ...};
    read PREFIX    restores PREFIX into a fresh graph and prints the lookups as JSON.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

if os.environ.get("TW_AS_TF"):
    import tensorweave as tf
else:
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()

QUERY = ["apple", "kiwi", "pear", "plum"]


def build():
    words = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1, name="words")
    vecs = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0],
                                                   name="vecs")
    v = tf.Variable([1.5, 2.5], name="v")
    fill = [words.insert(tf.constant(["apple", "pear", "plum"]),
                         tf.constant([3, 1, 4], tf.int64)),
            vecs.insert(tf.constant([7, 9], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]])),
            v.assign([5.0, 6.0])]
    probe = [words.lookup(tf.constant(QUERY)), vecs.lookup(tf.constant([7, 8, 9], tf.int64)),
             words.size(), v]
    return fill, probe


def main(mode, prefix):
    fill, probe = build()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        if mode == "write":
            sess.run(tf.global_variables_initializer())
            sess.run(fill)
            print(json.dumps({"prefix": saver.save(sess, prefix)}))
        else:
            saver.restore(sess, prefix)
            ids, vecs, size, v = sess.run(probe)
            print(json.dumps({"ids": ids.tolist(), "vecs": vecs.tolist(), "size": int(size),
                              "v": v.tolist()}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
