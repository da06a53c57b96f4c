"""Monitored-session scenarios run by both sides: `make_monitored_expected.py` runs them with
TensorFlow (TF1 graph mode) and writes tests/data/monitored_expected.json; the tests run them
with tensorweave and compare. Each case takes the `tf` module and a scratch directory and
returns plain JSON-able values (no paths, no wall times)."""

from __future__ import annotations

import glob
import os
import time

import numpy as np

RNG = np.random.RandomState(0)
X = RNG.randn(8, 2).astype(np.float32)
Y = X @ np.array([[1.0], [2.0]], np.float32)


def linear_model(tf):
    """A 2 -> 1 linear regression with a global step, a loss summary and a GD train op."""
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="loss")
    tf.summary.scalar("loss", loss)
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return {"x": x, "y": y, "w": w, "loss": loss, "step": step, "train_op": train_op}


def feed(m):
    return {m["x"]: X, m["y"]: Y}


def events(tf, directory):
    """The event stream of `directory`: (step, kind, detail) without times or paths."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "events.*"))):
        for e in tf.train.summary_iterator(path):
            kind = e.WhichOneof("what")
            if kind == "summary":
                detail = [[v.tag, None if v.tag.endswith("/sec") else round(v.simple_value, 4)]
                          for v in e.summary.value]
            elif kind == "session_log":
                detail = [int(e.session_log.status),
                          os.path.basename(e.session_log.checkpoint_path)]
            else:
                detail = None
            out.append([int(e.step), kind, detail])
    return out


def checkpoints(directory):
    return sorted(os.path.basename(p)[:-len(".index")]
                  for p in glob.glob(os.path.join(directory, "*.index")))


def _new_graph(tf):
    tf.reset_default_graph()
    tf.summary.FileWriterCache.clear()


def case_training_loop(tf, d):
    """MonitoredTrainingSession with StopAtStepHook, checkpoints every 10 steps, summaries
    every 5 steps: losses, files, events."""
    _new_graph(tf)
    m = linear_model(tf)
    hooks = [tf.train.StopAtStepHook(last_step=30)]
    losses = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=hooks,
                                           save_checkpoint_steps=10,
                                           save_summaries_steps=5) as sess:
        while not sess.should_stop():
            losses.append(float(sess.run([m["train_op"], m["loss"]], feed(m))[1]))
    return {"losses": losses, "checkpoints": checkpoints(d), "events": events(tf, d),
            "files": sorted(f for f in os.listdir(d) if not f.startswith("events."))}


def case_resume(tf, d):
    """A second MonitoredTrainingSession on the same directory restores and goes on."""
    case_training_loop(tf, d)
    _new_graph(tf)
    m = linear_model(tf)
    losses = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=10,
                                           hooks=[tf.train.StopAtStepHook(num_steps=5)]) as sess:
        while not sess.should_stop():
            losses.append(float(sess.run([m["train_op"], m["loss"]], feed(m))[1]))
    return {"losses": losses, "checkpoints": checkpoints(d)}


def recording_hook(tf, log, fetch=None, stop_after=None):
    """A SessionRunHook that appends each call to `log` (fetch results rounded) and requests a
    stop after `stop_after` runs."""
    class Hook(tf.train.SessionRunHook):
        runs = 0

        def begin(self):
            log.append(["begin"])

        def after_create_session(self, session, coord):
            log.append(["after_create_session", type(coord).__name__])

        def before_run(self, run_context):
            log.append(["before_run"])
            return tf.train.SessionRunArgs(fetch) if fetch is not None else None

        def after_run(self, run_context, run_values):
            r = run_values.results
            log.append(["after_run", None if r is None else round(float(r), 4)])
            self.runs += 1
            if stop_after is not None and self.runs >= stop_after:
                run_context.request_stop()

        def end(self, session):
            log.append(["end"])
    return Hook()


def case_hook_calls(tf, d):
    """The order of hook calls around a MonitoredSession, with fetches and request_stop."""
    del d
    _new_graph(tf)
    m = linear_model(tf)
    log = []
    hook = recording_hook(tf, log, fetch=m["loss"], stop_after=3)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(m["train_op"], feed(m))
            log.append(["caller_run"])
    return {"log": log}


def case_hook_error(tf, d):
    """A hook failing in after_run at step 5 ends the session with its error; end() is not
    called; the checkpoints written before stay."""
    _new_graph(tf)
    m = linear_model(tf)
    log = []

    class Failing(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(m["step"])

        def after_run(self, run_context, run_values):
            if run_values.results == 5:
                raise ValueError("hook failed at 5")

        def end(self, session):
            log.append("end")
    error = None
    try:
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=2,
                                               hooks=[Failing()]) as sess:
            while not sess.should_stop():
                sess.run(m["train_op"], feed(m))
    except ValueError as e:
        error = str(e)
    return {"error": error, "end_called": log, "checkpoints": checkpoints(d),
            "latest": os.path.basename(tf.train.latest_checkpoint(d))}


def case_nan(tf, d):
    """NanTensorHook: raising NanLossDuringTrainingError, or stopping quietly."""
    del d
    out = {}
    for fail in (True, False):
        _new_graph(tf)
        v = tf.Variable(1.0)
        loss = tf.math.log(v - 2.0) if hasattr(tf, "math") else tf.log(v - 2.0)
        step = tf.train.get_or_create_global_step()
        inc = tf.assign_add(step, 1)
        runs = 0
        try:
            with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail)]) as sess:
                while not sess.should_stop():
                    sess.run(inc)
                    runs += 1
            out[str(fail)] = ["stopped", runs]
        except tf.train.NanLossDuringTrainingError as e:
            out[str(fail)] = ["raised", str(e), runs]
    return out


def case_step_fn(tf, d):
    """run_step_fn: run_with_hooks goes through hooks; request_stop ends the with block."""
    del d
    _new_graph(tf)
    m = linear_model(tf)
    log = []
    hook = recording_hook(tf, log, fetch=m["loss"])

    def step_fn(step_context):
        value = step_context.run_with_hooks(m["step"], feed(m))
        raw = step_context.session.run(m["loss"], feed(m))
        step_context.run_with_hooks(m["train_op"], feed(m))
        if value >= 2:
            step_context.request_stop()
        return [int(value), round(float(raw), 4)]
    results = []
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            results.append(sess.run_step_fn(step_fn))
    return {"results": results, "log": log}


def case_final_and_feed(tf, d):
    """FinalOpsHook values after a FeedFnHook-fed loop; SingularMonitoredSession."""
    del d
    _new_graph(tf)
    m = linear_model(tf)
    feeds = tf.train.FeedFnHook(lambda: feed(m))
    final = tf.train.FinalOpsHook({"w": m["w"], "step": m["step"]})
    with tf.train.SingularMonitoredSession(hooks=[feeds, final,
                                                  tf.train.StopAtStepHook(last_step=4)]) as sess:
        raw = type(sess.raw_session()).__name__
        while not sess.should_stop():
            sess.run(m["train_op"])
    values = final.final_ops_values
    return {"w": np.asarray(values["w"]).round(5).tolist(), "step": int(values["step"]),
            "raw": raw}


def case_out_of_range(tf, d):
    """Input exhaustion (OutOfRangeError) ends the with block cleanly; end() runs."""
    del d
    _new_graph(tf)
    data = tf.data.Dataset.from_tensor_slices(np.arange(5, dtype=np.int64))
    nxt = tf.data.make_one_shot_iterator(data).get_next() if hasattr(
        tf.data, "make_one_shot_iterator") else data.make_one_shot_iterator().get_next()
    step = tf.train.get_or_create_global_step()
    with tf.control_dependencies([nxt]):
        inc = tf.assign_add(step, 1)
    final = tf.train.FinalOpsHook(step)
    seen = []
    with tf.train.MonitoredSession(hooks=[final]) as sess:
        while not sess.should_stop():
            seen.append(int(sess.run([nxt, inc])[0]))
    return {"seen": seen, "final_step": int(final.final_ops_values)}


def case_recover(tf, d):
    """An AbortedError in a run recreates the session from the last checkpoint (hooks see
    after_create_session again) and the loop goes on."""
    _new_graph(tf)
    m = linear_model(tf)
    log = []
    state = {"runs": 0}

    class Preempt(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            log.append(["created", int(session.run(m["step"]))])

        def after_run(self, run_context, run_values):
            state["runs"] += 1
            if state["runs"] == 7:
                raise tf.errors.AbortedError(None, None, "preempted")
    losses = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=4,
                                           hooks=[Preempt(),
                                                  tf.train.StopAtStepHook(last_step=10)]) as s:
        while not s.should_stop():
            losses.append(round(float(s.run([m["train_op"], m["loss"]], feed(m))[1]), 4))
    return {"log": log, "losses": losses}


def case_scaffold(tf, d):
    """Scaffold init_fn (not run when restoring), local variables, a custom saver."""
    out = {}
    for run in ("fresh", "restored"):
        _new_graph(tf)
        m = linear_model(tf)
        local = tf.get_variable("counter", [], tf.int64, initializer=tf.zeros_initializer(),
                                collections=[tf.GraphKeys.LOCAL_VARIABLES], trainable=False)
        count = tf.assign_add(local, 1)
        calls = []
        scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess, calls=calls: calls.append(
                                         "init_fn"),
                                     saver=tf.train.Saver(max_to_keep=2))
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, scaffold=scaffold,
                                               save_checkpoint_steps=3,
                                               hooks=[tf.train.StopAtStepHook(num_steps=7)]) as s:
            while not s.should_stop():
                c = s.run([m["train_op"], count], feed(m))[1]
        out[run] = {"init_fn": calls, "counter": int(c), "checkpoints": checkpoints(d)}
    return out


def case_step_counter(tf, d):
    """StepCounterHook every 2 steps: global_step/sec events at steps 2, 4, 6 (after the first
    trigger)."""
    _new_graph(tf)
    m = linear_model(tf)
    hooks = [tf.train.StepCounterHook(every_n_steps=2, output_dir=d),
             tf.train.StopAtStepHook(last_step=7)]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(m["train_op"], feed(m))
    tf.summary.FileWriterCache.clear()
    return {"events": [e for e in events(tf, d) if e[1] == "summary"]}


def case_supervisor(tf, d):
    """A Supervisor loop: managed_session restores from logdir, the checkpoint thread saves at
    once, STOP is logged at the end; OutOfRangeError ends the block cleanly, other errors are
    raised from it."""
    _new_graph(tf)
    m = linear_model(tf)
    sv = tf.train.Supervisor(logdir=d, save_model_secs=600, save_summaries_secs=600,
                             summary_op=tf.summary.scalar("w0", m["w"][0, 0]))
    losses = []
    with sv.managed_session() as sess:
        # NOTE: the checkpoint thread saves once at start; wait for it so that it cannot land
        # after the save below (then `checkpoint` would name step 0, in TF as here).
        deadline = time.time() + 60
        while tf.train.latest_checkpoint(d) is None and time.time() < deadline:
            time.sleep(0.01)
        for _ in range(5):
            if sv.should_stop():
                break
            losses.append(round(float(sess.run([m["train_op"], m["loss"]], feed(m))[1]), 4))
        sv.saver.save(sess, sv.save_path, global_step=m["step"])
    # NOTE: the checkpoint thread's SessionLog step races with the loop (in TF as here).
    kinds = [[e[1], e[2]] for e in events(tf, d) if e[1] != "summary"]
    out = {"losses": losses, "checkpoints": checkpoints(d), "events": kinds}
    _new_graph(tf)
    m = linear_model(tf)
    sv = tf.train.Supervisor(logdir=d, save_model_secs=0, save_summaries_secs=0)
    with sv.managed_session() as sess:
        out["restored_step"] = int(sess.run(m["step"]))
        raise tf.errors.OutOfRangeError(None, None, "input done")
    _new_graph(tf)
    linear_model(tf)
    sv = tf.train.Supervisor(logdir=d, save_model_secs=0, save_summaries_secs=0)
    try:
        with sv.managed_session():
            raise ValueError("user error")
    except ValueError as e:
        out["raised"] = str(e)
    return out


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}
