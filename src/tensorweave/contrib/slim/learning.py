"""`tf.contrib.slim.learning` (TF 1.15's contrib/slim learning.py): `create_train_op` (a
loss tensor that runs one optimizer step, UPDATE_OPS first) and `train`, the TF-Slim train
loop on a `tf.train.Supervisor`: restore from `logdir` or initialize (then `init_fn`), run
`train_step_fn` until `number_of_steps` or a stop, log every `log_every_n_steps`, write
summaries every `save_summaries_secs` and checkpoints every `save_interval_secs`, and save a
final checkpoint."""

from __future__ import annotations

import time

from tensorweave import errors
from tensorweave.framework.graph import (
    GraphKeys,
    get_collection,
    get_collection_ref,
    get_default_graph,
)
from tensorweave.framework.scopes import name_scope
from tensorweave.ops import array_ops, constant_op, control_flow_ops, math_ops
from tensorweave.ops.variable_scope import get_or_create_global_step
from tensorweave.tf_logging import info, warning

_USE_DEFAULT = 0
_USE_GLOBAL_STEP = 0


def multiply_gradients(grads_and_vars, gradient_multipliers):
    """Scales each gradient by `gradient_multipliers[var]` (keys: variables or their op
    names).

    Raises:
      ValueError: `gradient_multipliers` is empty.
    """
    if not gradient_multipliers:
        raise ValueError("`gradient_multipliers` is empty.")
    out = []
    for grad, var in grads_and_vars:
        key = var if var in gradient_multipliers else var.op.name
        if grad is not None and key in gradient_multipliers:
            grad = grad * math_ops.cast(gradient_multipliers[key], grad.dtype)
        out.append((grad, var))
    return out


def clip_gradient_norms(gradients_to_variables, max_norm):
    """Clips each gradient to norm `max_norm`."""
    from tensorweave.training.clip_ops import clip_by_norm

    return [(None if g is None else clip_by_norm(g, max_norm), v)
            for g, v in gradients_to_variables]


def _with_update_ops(total_loss, update_ops):
    global_update_ops = get_collection(GraphKeys.UPDATE_OPS)
    if update_ops is None:
        update_ops = global_update_ops
    elif not all(any(u is x for x in update_ops) for u in global_update_ops):
        warning("update_ops in create_train_op does not contain all the update_ops in "
                "GraphKeys.UPDATE_OPS")
    if not update_ops:
        return total_loss
    return control_flow_ops.with_dependencies(list(update_ops), total_loss)


def create_train_op(total_loss, optimizer, global_step=_USE_GLOBAL_STEP, update_ops=None,
                    variables_to_train=None, clip_gradient_norm=0, summarize_gradients=False,
                    gate_gradients=1, aggregation_method=None,
                    colocate_gradients_with_ops=False, gradient_multipliers=None,
                    check_numerics=True):
    """A tensor with `total_loss`'s value that applies one `optimizer` step to
    `variables_to_train` (all trainable) and increments `global_step`; added to TRAIN_OP.

    Raises:
      ValueError: no variables to train.
    """
    if global_step is _USE_GLOBAL_STEP:
        global_step = get_or_create_global_step()
    total_loss = _with_update_ops(total_loss, update_ops)
    if variables_to_train is None:
        variables_to_train = get_collection(GraphKeys.TRAINABLE_VARIABLES)
    if not variables_to_train:
        raise ValueError("No variables to optimize.")
    grads = optimizer.compute_gradients(total_loss, variables_to_train,
                                        gate_gradients=gate_gradients,
                                        aggregation_method=aggregation_method,
                                        colocate_gradients_with_ops=colocate_gradients_with_ops)
    if gradient_multipliers:
        grads = multiply_gradients(grads, gradient_multipliers)
    if clip_gradient_norm > 0:
        grads = clip_gradient_norms(grads, clip_gradient_norm)
    if summarize_gradients:
        _add_gradients_summaries(grads)
    grad_updates = optimizer.apply_gradients(grads, global_step=global_step)
    with name_scope("train_op"):
        if check_numerics:
            total_loss = array_ops.check_numerics(total_loss, "LossTensor is inf or nan")
        train_op = control_flow_ops.with_dependencies([grad_updates], total_loss)
    train_ops = get_collection_ref(GraphKeys.TRAIN_OP)
    if not any(t is train_op for t in train_ops):
        train_ops.append(train_op)
    return train_op


def _add_gradients_summaries(grads_and_vars):
    from tensorweave.ops.summary_ops import histogram, scalar
    from tensorweave.training.clip_ops import global_norm

    for grad, var in grads_and_vars:
        if grad is not None:
            histogram(var.op.name + "/gradient", grad)
            scalar(var.op.name + "/gradient_norm", global_norm([grad]))


def train_step(sess, train_op, global_step, train_step_kwargs):
    """Runs `train_op` once; logs the loss when `should_log` is true. Returns
    (total_loss, should_stop)."""
    start = time.time()
    total_loss, np_global_step = sess.run([train_op, global_step])
    elapsed = time.time() - start
    if "should_log" in train_step_kwargs and sess.run(train_step_kwargs["should_log"]):
        info("global step %d: loss = %.4f (%.3f sec/step)", np_global_step, total_loss,
             elapsed)
    should_stop = bool(sess.run(train_step_kwargs["should_stop"])) \
        if "should_stop" in train_step_kwargs else False
    return total_loss, should_stop


def _default_step_kwargs(global_step, number_of_steps, log_every_n_steps):
    with name_scope("train_step"):
        kwargs = {}
        if number_of_steps:
            kwargs["should_stop"] = math_ops.greater_equal(global_step, number_of_steps)
        else:
            kwargs["should_stop"] = constant_op.constant(False)
        if log_every_n_steps > 0:
            kwargs["should_log"] = math_ops.equal(
                math_ops.mod(global_step, log_every_n_steps), 0)
        return kwargs


def _check_logdir_args(logdir, summary_op, saver, trace_every_n_steps) -> None:
    if logdir is not None:
        return
    if summary_op != _USE_DEFAULT:
        raise ValueError("Cannot provide summary_op because logdir=None")
    if saver is not None:
        raise ValueError("Cannot provide saver because logdir=None")
    if trace_every_n_steps is not None:
        raise ValueError("Cannot provide trace_every_n_steps because logdir=None")


def _defaults(init_op, ready_op, local_init_op, summary_op):
    from tensorweave.ops import variables
    from tensorweave.ops.summary_ops import merge_all

    if init_op == _USE_DEFAULT:
        init_op = variables.global_variables_initializer()
    if ready_op == _USE_DEFAULT:
        ready_op = variables.report_uninitialized_variables()
    if local_init_op == _USE_DEFAULT:
        local_init_op = control_flow_ops.group(variables.local_variables_initializer(),
                                               *get_collection(GraphKeys.TABLE_INITIALIZERS))
    if summary_op == _USE_DEFAULT:
        summary_op = merge_all()
    return init_op, ready_op, local_init_op, summary_op


def train(train_op, logdir, train_step_fn=train_step, train_step_kwargs=_USE_DEFAULT,
          log_every_n_steps=1, graph=None, master="", is_chief=True, global_step=None,
          number_of_steps=None, init_op=_USE_DEFAULT, init_feed_dict=None,
          local_init_op=_USE_DEFAULT, init_fn=None, ready_op=_USE_DEFAULT,
          summary_op=_USE_DEFAULT, save_summaries_secs=600, summary_writer=_USE_DEFAULT,
          startup_delay_steps=0, saver=None, save_interval_secs=600, sync_optimizer=None,
          session_config=None, session_wrapper=None, trace_every_n_steps=None,
          ignore_live_threads=False):
    """Runs the training loop; returns the last step's loss.

    Raises:
      ValueError: `train_op` is None, or a summary_op / saver / trace_every_n_steps without
        a `logdir`.
      NotImplementedError: `sync_optimizer`, `session_wrapper` or `trace_every_n_steps`.
    """
    from tensorweave.training.saver import Saver
    from tensorweave.training.supervisor import Supervisor

    if train_op is None:
        raise ValueError("train_op cannot be None.")
    _check_logdir_args(logdir, summary_op, saver, trace_every_n_steps)
    if sync_optimizer is not None or session_wrapper is not None or trace_every_n_steps:
        raise NotImplementedError("slim.learning.train: sync_optimizer, session_wrapper and "
                                  "trace_every_n_steps are not supported")
    graph = graph or get_default_graph()
    with graph.as_default():
        global_step = global_step if global_step is not None else get_or_create_global_step()
        saver = saver or Saver()
        init_op, ready_op, local_init_op, summary_op = _defaults(
            init_op, ready_op, local_init_op, summary_op)
        if train_step_kwargs == _USE_DEFAULT:
            train_step_kwargs = _default_step_kwargs(global_step, number_of_steps,
                                                     log_every_n_steps)
    sv = Supervisor(graph=graph, is_chief=is_chief, logdir=logdir, init_op=init_op,
                    init_feed_dict=init_feed_dict, local_init_op=local_init_op,
                    ready_op=ready_op, summary_op=summary_op,
                    summary_writer=Supervisor.USE_DEFAULT if summary_writer == _USE_DEFAULT
                    else summary_writer, global_step=global_step, saver=saver,
                    save_summaries_secs=save_summaries_secs,
                    save_model_secs=save_interval_secs, init_fn=init_fn)
    startup_steps = min(startup_delay_steps, number_of_steps or startup_delay_steps)
    return _run_loop(sv, master, session_config, is_chief, logdir, startup_steps,
                     train_step_fn, train_op, global_step, train_step_kwargs,
                     ignore_live_threads)


def _run_loop(sv, master, config, is_chief, logdir, startup_steps, train_step_fn,
              train_op, global_step, train_step_kwargs, ignore_live_threads):
    total_loss = None
    while True:
        try:
            with sv.managed_session(master, start_standard_services=False,
                                    config=config) as sess:
                info("Starting Session.")
                if is_chief and logdir:
                    sv.start_standard_services(sess)
                elif startup_steps > 0:
                    _wait_for_step(sess, global_step, startup_steps)
                threads = sv.start_queue_runners(sess)
                info("Starting Queues.")
                try:
                    while not sv.should_stop():
                        total_loss, should_stop = train_step_fn(sess, train_op, global_step,
                                                                train_step_kwargs)
                        if should_stop:
                            info("Stopping Training.")
                            sv.request_stop()
                            break
                except errors.OutOfRangeError as e:
                    info("Caught OutOfRangeError. Stopping Training. %s", e)
                if logdir and is_chief:
                    info("Finished training! Saving model to disk.")
                    sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
                sv.stop(threads, close_summary_writer=True,
                        ignore_live_threads=ignore_live_threads)
            return total_loss
        except errors.AbortedError:
            info("Retrying training!")


def _wait_for_step(sess, global_step, step, deadline_secs=7200.0):
    """Blocks until `global_step` reaches `step` (a non-chief's startup delay), at most
    `deadline_secs`."""
    end = time.time() + deadline_secs
    while sess.run(global_step) < step and time.time() < end:
        time.sleep(0.1)
