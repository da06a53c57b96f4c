# The partitioned-variable cases of TensorFlow's checkpoint_utils tests:
#   tensorflow/tensorflow, tensorflow/python/training/checkpoint_utils_test.py
#   (`_create_partition_checkpoints`, `CheckpointsTest.testInitFromPartitionVar`),
# with the module-level imports of TF's internal modules (variable_scope, init_ops,
# partitioned_variables, checkpoint_utils, saver_lib, ops, test) written as the public
# `tf.compat.v1` names they export (`tf.get_variable`, `tf.zeros_initializer`,
# `tf.min_max_variable_partitioner`, `tf.train.init_from_checkpoint`, `tf.train.Saver`,
# `tf.Graph`, `tf.test`); the test bodies are TF's. Copyright 2016 The TensorFlow Authors,
# Apache License 2.0.
"""Tests for checkpoints tools."""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import os

import numpy as np
import tensorflow as tf


def _create_partition_checkpoints(sess, checkpoint_dir):
  checkpoint_prefix = os.path.join(checkpoint_dir, "model")
  checkpoint_state_name = "checkpoint"
  with tf.variable_scope("scope"):
    v1 = tf.get_variable(
        name="var1",
        shape=[100, 100],
        initializer=tf.truncated_normal_initializer(0.5),
        partitioner=tf.min_max_variable_partitioner(
            max_partitions=5, axis=0, min_slice_size=8 << 10))
  sess.run(tf.global_variables_initializer())
  v1_value = sess.run(v1._get_variable_list())
  saver = tf.train.Saver()
  saver.save(
      sess,
      checkpoint_prefix,
      global_step=0,
      latest_filename=checkpoint_state_name)
  return v1_value


class CheckpointsTest(tf.test.TestCase):

  def testInitFromPartitionVar(self):
    checkpoint_dir = self.get_temp_dir()
    with self.cached_session() as session:
      v1 = _create_partition_checkpoints(session, checkpoint_dir)

    # New graph and session.
    with tf.Graph().as_default() as g:
      with self.session(graph=g) as session:
        with tf.variable_scope("some_scope"):
          my1 = tf.get_variable(
              name="my1",
              shape=[100, 100],
              initializer=tf.zeros_initializer(),
              partitioner=tf.min_max_variable_partitioner(
                  max_partitions=5, axis=0, min_slice_size=8 << 10))
          my1_var_list = my1._get_variable_list()
        # Create another variable with different partitions than the variable in
        # the checkpoint.
        with tf.variable_scope("some_other_scope"):
          my2 = tf.get_variable(
              name="var1",
              shape=[100, 100],
              initializer=tf.zeros_initializer(),
              partitioner=tf.min_max_variable_partitioner(
                  max_partitions=5, axis=0, min_slice_size=16 << 10))
          my2_var_list = my2._get_variable_list()

        tf.train.init_from_checkpoint(checkpoint_dir, {
            "scope/var1": "some_scope/my1",
            "scope/": "some_other_scope/"})

        session.run(tf.global_variables_initializer())
        my1_values = session.run(my1_var_list)
        self.assertAllEqual(my1_values, v1)
        my2_values = session.run(my2_var_list)
        # Verify we created different number of partitions.
        self.assertNotEqual(len(my2_values), len(v1))
        # Verify the values were correctly initialized inspite of different
        # partitions.
        full_my2_values = np.concatenate(my2_values, axis=0)
        full_v1_values = np.concatenate(v1, axis=0)
        self.assertAllEqual(full_my2_values, full_v1_values)

    # New graph and session.
    with tf.Graph().as_default() as g:
      with self.session(graph=g) as session:
        with tf.variable_scope("some_scope"):
          my1 = tf.get_variable(
              name="my1",
              shape=[100, 100],
              initializer=tf.truncated_normal_initializer(0.5),
              partitioner=tf.min_max_variable_partitioner(
                  max_partitions=5, axis=0, min_slice_size=8 << 10))
          my1_var_list = my1._get_variable_list()

        tf.train.init_from_checkpoint(checkpoint_dir,
                                      {"scope/var1": my1_var_list,})

        session.run(tf.global_variables_initializer())
        my1_values = session.run(my1_var_list)
        self.assertAllEqual(my1_values, v1)


if __name__ == "__main__":
  tf.test.main()
