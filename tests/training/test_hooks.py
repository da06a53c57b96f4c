"""The standard hooks and the monitored-session edges that monitored_cases.py does not cover:
argument errors, Ctrl-C, logging format, timelines, listeners, queue runners, chief/worker."""

from __future__ import annotations

import json
import logging
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.training.monitored_cases import feed, linear_model


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.summary.FileWriterCache.clear()
    tf.reset_default_graph()


def _train(sess, m, limit=1000):
    n = 0
    while not sess.should_stop() and n < limit:
        sess.run(m["train_op"], feed(m))
        n += 1
    return n


@pytest.mark.parametrize("make, message", [
    (lambda: tf.train.StopAtStepHook(), "One of num_steps or last_step must be specified."),
    (lambda: tf.train.StopAtStepHook(1, 2), "Only one of num_steps or last_step"),
    (lambda: tf.train.SecondOrStepTimer(), "Either every_secs or every_steps"),
    (lambda: tf.train.SecondOrStepTimer(1, 1), "Can not provide both"),
    (lambda: tf.train.LoggingTensorHook(["a"]), "either at_end and/or exactly one"),
    (lambda: tf.train.LoggingTensorHook(["a"], every_n_iter=0), "invalid every_n_iter=0"),
    (lambda: tf.train.SummarySaverHook(save_steps=1), "Exactly one of scaffold or summary_op"),
    (lambda: tf.train.StepCounterHook(every_n_steps=None), "exactly one of every_n_steps"),
    (lambda: tf.train.CheckpointSaverHook("d", save_steps=1, saver=object(),
                                          scaffold=object()), "both saver and scaffold"),
])
def test_hook_argument_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_hooks_need_a_global_step():
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


def test_ctrl_c_runs_end_and_leaves_a_complete_checkpoint(tmp_path):
    m = linear_model(tf)
    ended = []

    class Interrupt(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(m["step"])

        def after_run(self, run_context, run_values):
            if run_values.results == 4:
                raise KeyboardInterrupt

        def end(self, session):
            ended.append(int(session.run(m["step"])))
    with pytest.raises(KeyboardInterrupt):
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               hooks=[Interrupt()]) as sess:
            _train(sess, m)
    assert ended == [5]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")
    assert not tf.get_default_graph().finalized
    tf.reset_default_graph()
    m = linear_model(tf)
    with tf.train.SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as sess:
        assert sess.run(m["step"]) == 5


def test_a_failing_hook_skips_end_and_keeps_its_error(tmp_path):
    m = linear_model(tf)
    listener_calls = []

    class Listener(tf.train.CheckpointSaverListener):
        def end(self, session, global_step_value):
            listener_calls.append(global_step_value)

    class Boom(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise tf.errors.InvalidArgumentError(None, None, "boom")
    saver_hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=100,
                                              listeners=[Listener()])
    with pytest.raises(tf.errors.InvalidArgumentError, match="boom"):
        with tf.train.MonitoredSession(hooks=[saver_hook, Boom()]) as sess:
            _train(sess, m)
    assert listener_calls == []
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-0")


def test_logging_tensor_hook_format(caplog):
    m = linear_model(tf)
    hook = tf.train.LoggingTensorHook({"step": m["step"], "loss": m["loss"]}, every_n_iter=2)
    end_hook = tf.train.LoggingTensorHook(["global_step"], at_end=True)
    with caplog.at_level(logging.INFO, logger="tensorweave"):
        with tf.train.MonitoredSession(hooks=[hook, end_hook,
                                              tf.train.StopAtStepHook(last_step=3)]) as s:
            _train(s, m)
    lines = [r.getMessage() for r in caplog.records if " = " in r.getMessage()]
    assert lines[0] == "loss = 6.1121693, step = 0"
    assert lines[1].startswith("loss = 1.97293, step = 2 (") and lines[1].endswith(" sec)")
    assert lines[2] == "global_step = 3"
    assert len(lines) == 3


def test_logging_tensor_hook_names_and_formatter(caplog):
    m = linear_model(tf)
    hook = tf.train.LoggingTensorHook(["loss"], every_n_iter=1,
                                      formatter=lambda v: f"L={v['loss']:.2f}")
    with caplog.at_level(logging.INFO, logger="tensorweave"):
        with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=1)]) as s:
            _train(s, m)
    assert "L=6.11" in [r.getMessage() for r in caplog.records]


def test_checkpoint_listener_order_and_stop(tmp_path):
    m = linear_model(tf)
    calls = []

    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            calls.append("begin")

        def before_save(self, session, global_step_value):
            calls.append(("before", int(global_step_value)))

        def after_save(self, session, global_step_value):
            calls.append(("after", int(global_step_value)))
            return global_step_value >= 4

        def end(self, session, global_step_value):
            calls.append(("end", int(global_step_value)))
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()])
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        steps = _train(sess, m)
    assert steps == 4
    assert calls == ["begin", ("before", 0), ("after", 0), ("before", 2), ("after", 2),
                     ("before", 4), ("after", 4), ("end", 4)]
    assert os.path.exists(tmp_path / "graph.pbtxt")


def test_profiler_hook_writes_chrome_traces(tmp_path):
    m = linear_model(tf)
    hooks = [tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path)),
             tf.train.StopAtStepHook(last_step=5)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        _train(sess, m)
    traces = sorted(p for p in os.listdir(tmp_path) if p.startswith("timeline-"))
    assert traces == ["timeline-2.json", "timeline-4.json"]
    trace = json.loads((tmp_path / "timeline-2.json").read_text())
    names = {e.get("name") for e in trace["traceEvents"]}
    assert "MatMul" in names or any("MatMul" in str(e.get("args")) for e in trace["traceEvents"])


def test_summary_saver_hook_with_an_explicit_op(tmp_path):
    m = linear_model(tf)
    op = tf.summary.scalar("w0", m["w"][0, 0])
    hooks = [tf.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op=op),
             tf.train.StopAtStepHook(last_step=4)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        _train(sess, m)
    tf.summary.FileWriterCache.clear()
    (path,) = [tmp_path / p for p in os.listdir(tmp_path) if p.startswith("events.")]
    steps = [e.step for e in tf.train.summary_iterator(str(path)) if e.HasField("summary")]
    assert steps == [1, 3]


def test_run_after_stop_and_conflicting_feeds():
    m = linear_model(tf)
    hook = tf.train.FeedFnHook(lambda: feed(m))
    with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=1)]) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(m["train_op"], feed(m))
        sess.run(m["train_op"])
        assert sess.should_stop()
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(m["train_op"])


def test_step_fn_signature_is_checked():
    linear_model(tf)
    with tf.train.MonitoredSession() as sess:
        with pytest.raises(ValueError, match="`step_fn` may either have one `step_context`"):
            sess.run_step_fn(lambda a, b: None)


def test_graph_finalized_only_while_open():
    linear_model(tf)
    with tf.train.MonitoredSession():
        assert tf.get_default_graph().finalized
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(1.0)
    assert not tf.get_default_graph().finalized


def test_queue_runners_start_and_stop():
    queue = tf.FIFOQueue(10, tf.float32)
    enqueue = queue.enqueue([tf.constant(1.5)])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    value = queue.dequeue()
    with tf.train.MonitoredSession(stop_grace_period_secs=10) as sess:
        assert [sess.run(value) for _ in range(3)] == [1.5] * 3


def test_global_step_waiter_passes_once_reached(tmp_path):
    m = linear_model(tf)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[tf.train.StopAtStepHook(last_step=3)]) as s:
        _train(s, m)
    tf.reset_default_graph()
    m = linear_model(tf)
    hooks = [tf.train.GlobalStepWaiterHook(3), tf.train.StopAtStepHook(num_steps=1)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks) as s:
        assert _train(s, m) == 1


def test_worker_waits_for_the_chief_through_a_server(tmp_path):
    server = tf.train.Server.create_local_server()
    m = linear_model(tf)
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=True,
                                           checkpoint_dir=str(tmp_path)) as chief:
        chief.run(m["train_op"], feed(m))
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=False,
                                               max_wait_secs=30) as worker:
            assert worker.run(m["step"]) == 1
            worker.run(m["train_op"], feed(m))
        assert chief.run(m["step"]) == 2


def test_worker_gives_up_after_max_wait():
    linear_model(tf)
    manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                      recovery_wait_secs=0.05)
    with pytest.raises(tf.errors.DeadlineExceededError, match="Session was not ready"):
        manager.wait_for_session("", max_wait_secs=0.2)


def test_session_manager_prepare_and_recover(tmp_path):
    m = linear_model(tf)
    saver = tf.train.Saver()
    manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    with pytest.raises(RuntimeError, match="Model is not initialized and no init_op"):
        manager.prepare_session("")
    sess = manager.prepare_session("", init_op=tf.global_variables_initializer())
    sess.run(m["train_op"], feed(m))
    saver.save(sess, str(tmp_path / "model"), global_step=m["step"])
    sess.close()
    sess, restored = manager.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert restored and sess.run(m["step"]) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    _, restored = manager.recover_session("", saver=saver, checkpoint_dir=str(empty))
    assert not restored


def test_scaffold_collections():
    linear_model(tf)
    scaffold = tf.train.Scaffold().finalize()
    assert scaffold.init_op is tf.get_collection(tf.GraphKeys.INIT_OP)[0]
    assert scaffold.saver is tf.get_collection(tf.GraphKeys.SAVERS)[0]
    assert scaffold.summary_op is not None
    tf.get_default_graph()._unsafe_unfinalize()
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.constant([], tf.string))
    with pytest.raises(RuntimeError, match='More than one item in the collection "ready_op"'):
        tf.train.Scaffold().finalize()


def test_nan_hook_message():
    assert str(tf.train.NanLossDuringTrainingError()) == "NaN loss during training."
    assert np.isnan(np.float32("nan"))


def test_contrib_framework_global_step_helpers():
    step = tf.contrib.framework.get_or_create_global_step()
    assert step is tf.train.get_global_step() is tf.contrib.framework.get_global_step()
    assert step.op.name == "global_step" and step.dtype.base_dtype == tf.int64
    with pytest.raises(ValueError, match='"global_step" already exists'):
        tf.contrib.framework.create_global_step()
