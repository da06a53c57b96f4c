# The partitioned-variable case of TensorFlow's Saver tests:
#   tensorflow/tensorflow, tensorflow/python/training/saver_test.py
#   (`SaveRestoreShardedTest._testPartitionedVariables`, `testPartitionedVariable`),
# with the module-level imports of TF's internal modules (variable_scope, variables,
# partitioned_variables, random_ops, array_ops, saver_module, ops_lib, gfile, test) written as
# the public `tf.compat.v1` names they export (`tf.get_variable`, `tf.Variable`,
# `tf.create_partitioned_variables`, `tf.random_uniform`, `tf.zeros`, `tf.concat`,
# `tf.train.Saver`, `tf.Graph`, `tf.gfile`, `tf.test`); the resource-variable variant is left
# out (tensorweave has ref variables only). The test body is TF's. Copyright 2015 The
# TensorFlow Authors, Apache License 2.0.
"""Tests for tensorflow.python.training.saver.py."""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import os

import tensorflow as tf


class SaveRestoreShardedTest(tf.test.TestCase):

  def _get_test_dir(self, dirname):
    test_dir = os.path.join(self.get_temp_dir(), dirname)
    tf.gfile.MakeDirs(test_dir)
    return test_dir

  def _testPartitionedVariables(self, use_resource):
    var_full_shape = [10, 3]
    # Allows save/restore mechanism to work w/ different slicings.
    var_name = "my_var"
    saved_dir = self._get_test_dir("partitioned_variables")
    saved_path = os.path.join(saved_dir, "ckpt")

    call_saver_with_dict = False  # updated by test loop below

    def _save(slices=None, partitioner=None):
      with self.test_session(graph=tf.Graph()) as sess:
        # Calls .eval() to return the ndarray that makes up the full variable.
        rnd = tf.random_uniform(var_full_shape).eval()

        if slices:
          assert not partitioner
          # TODO(apassos): make create_partitioned_variables take use_resource
          # option to make this test passable without creating a named
          # variable_scope.
          vs = tf.create_partitioned_variables(
              var_full_shape, slices, rnd, name=var_name)
        elif partitioner:
          vs = [
              tf.get_variable(
                  var_name,
                  shape=var_full_shape,
                  initializer=rnd,
                  partitioner=partitioner,
                  use_resource=use_resource)
          ]
        else:
          vs = [tf.Variable(rnd, name=var_name)]

        tf.global_variables_initializer().run()
        if call_saver_with_dict:
          saver = tf.train.Saver({var_name: (vs if slices else vs[0])})
        else:
          saver = tf.train.Saver(vs)
        actual_path = saver.save(sess, saved_path)
        self.assertEqual(saved_path, actual_path)

        return rnd

    def _restore(slices=None, partitioner=None):
      with self.test_session(graph=tf.Graph()) as sess:
        if slices:
          assert not partitioner
          new_vs = tf.create_partitioned_variables(
              var_full_shape,
              slices,
              tf.zeros(var_full_shape),  # != original contents.
              name=var_name)
        elif partitioner:
          new_vs = [
              tf.get_variable(
                  var_name,
                  shape=var_full_shape,
                  initializer=tf.zeros(var_full_shape),
                  partitioner=partitioner)
          ]
        else:
          new_vs = [
              tf.Variable(
                  tf.zeros(
                      shape=var_full_shape),  # != original contents.
                  name=var_name)
          ]

        tf.global_variables_initializer().run()
        if call_saver_with_dict:
          saver = tf.train.Saver({
              var_name: (new_vs if slices else new_vs[0])
          })
        else:
          saver = tf.train.Saver(new_vs)
        saver.restore(sess, saved_path)

        if partitioner:
          return new_vs[0].as_tensor().eval()
        elif slices and slices[0] != 1:
          return tf.concat(new_vs, 0).eval()
        elif slices and slices[1] != 1:
          return tf.concat(new_vs, 1).eval()
        else:  # Non-sliced.
          return new_vs[0].eval()

    for call_saver_with_dict in {False, True}:
      # Save PartitionedVariable and restore into full variable.
      saved_full = _save(
          partitioner=tf.fixed_size_partitioner(
              num_shards=2))
      restored_full = _restore()
      self.assertAllEqual(saved_full, restored_full)

      # Saves 10 horizontal parts of a partitioned variable.
      # Restores into a full variable, non-sliced.
      saved_full = _save(slices=[10, 1])
      restored_full = _restore()
      self.assertAllEqual(saved_full, restored_full)

      # Restores into a different number/orientation of slices.
      restored_full = _restore(slices=[2, 1])  # 2 horizon parts.
      self.assertAllEqual(saved_full, restored_full)
      restored_full = _restore(slices=[1, 3])  # 3 vertical parts.
      self.assertAllEqual(saved_full, restored_full)

      # Restores into a PartitionedVariable
      restored_full = _restore(
          partitioner=tf.fixed_size_partitioner(
              num_shards=2))
      self.assertAllEqual(saved_full, restored_full)

      # Now, saves a full variable and restores in slices.
      saved_full = _save()
      restored_full = _restore(slices=[1, 3])
      self.assertAllEqual(saved_full, restored_full)

  def testPartitionedVariable(self):
    self._testPartitionedVariables(use_resource=False)


if __name__ == "__main__":
  tf.test.main()
