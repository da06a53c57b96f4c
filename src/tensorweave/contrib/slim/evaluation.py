"""`tf.contrib.slim.evaluation`: `evaluation` (TF-Slim's single evaluation pass: run
`initial_op` once, `eval_op` `num_evals` times, then return `final_op`'s value; optionally
write `summary_op` at the global step) and `evaluate_once` (the same on a checkpoint)."""

from __future__ import annotations


def evaluation(sess, num_evals=1, initial_op=None, initial_op_feed_dict=None, eval_op=None,
               eval_op_feed_dict=None, final_op=None, final_op_feed_dict=None,
               summary_op=None, summary_op_feed_dict=None, summary_writer=None,
               global_step=None):
    """Returns `final_op`'s value (None without one)."""
    if initial_op is not None:
        sess.run(initial_op, initial_op_feed_dict)
    if eval_op is not None:
        eval_op = list(eval_op) if not hasattr(eval_op, "graph") else eval_op
        for _ in range(int(num_evals)):
            sess.run(eval_op, eval_op_feed_dict)
    final_value = None
    if final_op is not None:
        final_op = list(final_op) if not hasattr(final_op, "graph") else final_op
        final_value = sess.run(final_op, final_op_feed_dict)
    if summary_op is not None and summary_writer is not None:
        step = sess.run(global_step) if global_step is not None else None
        summary_writer.add_summary(sess.run(summary_op, summary_op_feed_dict), step)
        summary_writer.flush()
    return final_value


_USE_DEFAULT = 0


def evaluate_once(master, checkpoint_path, logdir, num_evals=1, initial_op=None,
                  initial_op_feed_dict=None, eval_op=None, eval_op_feed_dict=None,
                  final_op=None, final_op_feed_dict=None, summary_op=_USE_DEFAULT,
                  summary_op_feed_dict=None, variables_to_restore=None, session_config=None,
                  hooks=None):
    """Restores `checkpoint_path` (all variables, or `variables_to_restore`) into a fresh
    session, runs `evaluation`, writes `summary_op` (all summaries by default) to `logdir`
    at the checkpoint's global step, and returns `final_op`'s value.

    Raises:
      NotImplementedError: `hooks`.
    """
    from tensorweave.client.session import Session
    from tensorweave.framework.graph import GraphKeys, get_collection
    from tensorweave.monitoring.summary.writer import FileWriter
    from tensorweave.ops import control_flow_ops, variables
    from tensorweave.ops.summary_ops import merge_all
    from tensorweave.ops.variable_scope import get_or_create_global_step
    from tensorweave.tf_logging import info
    from tensorweave.training.saver import Saver

    if hooks:
        raise NotImplementedError("slim.evaluation.evaluate_once: hooks are not supported")
    if summary_op == _USE_DEFAULT:
        summary_op = merge_all()
    global_step = get_or_create_global_step()
    saver = Saver(variables_to_restore)
    init = control_flow_ops.group(variables.global_variables_initializer(),
                                  variables.local_variables_initializer(),
                                  *get_collection(GraphKeys.TABLE_INITIALIZERS))
    writer = FileWriter(logdir) if summary_op is not None and logdir else None
    info("Starting evaluation")
    try:
        with Session(master, config=session_config) as sess:
            sess.run(init)
            saver.restore(sess, checkpoint_path)
            return evaluation(sess, num_evals, initial_op, initial_op_feed_dict, eval_op,
                              eval_op_feed_dict, final_op, final_op_feed_dict, summary_op,
                              summary_op_feed_dict, writer, global_step)
    finally:
        if writer is not None:
            writer.close()
        info("Finished evaluation")
