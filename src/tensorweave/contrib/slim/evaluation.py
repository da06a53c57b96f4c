"""`tf.contrib.slim.evaluation.evaluation` (TF-Slim's single evaluation pass): run
`initial_op` once, `eval_op` `num_evals` times, then return `final_op`'s value; optionally
write `summary_op` at the global step."""

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
