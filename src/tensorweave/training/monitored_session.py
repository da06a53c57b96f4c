"""Monitored sessions (TF1 monitored_session.py): `MonitoredSession`,
`SingularMonitoredSession`, `MonitoredTrainingSession`, and the session creators.

    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[...]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

Life of a monitored session: hooks' `begin()`; the creator builds a ready session (restoring
from `checkpoint_dir` when it holds a checkpoint); queue runners start; hooks'
`after_create_session`; each `run` goes through the hooks; on a clean exit (including
OutOfRangeError / StopIteration, which the `with` block swallows) hooks' `end()` run and the
session closes. Any other exception closes the session without `end()` and propagates, so a
failing hook's error reaches the caller and the checkpoints already written stay as they are.
Ctrl-C (KeyboardInterrupt) is the one exception after which `end()` still runs, so the final
checkpoint and summaries are written before the interrupt propagates (TF skips them).
"""

from __future__ import annotations

import inspect

from tensorweave.framework.graph import GraphKeys, get_collection, get_default_graph
from tensorweave.training import queue_runner
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.hooks import CheckpointSaverHook, StepCounterHook, SummarySaverHook
from tensorweave.training.scaffold import Scaffold
from tensorweave.training.session_manager import SessionManager
from tensorweave.training.wrapped_sessions import (
    CoordinatedSession,
    HookedSession,
    RecoverableSession,
    StepContext,
    exc_is_clean_end,
)

USE_DEFAULT = object()


class SessionCreator:
    """Makes a `tf.Session`; subclasses implement `create_session`."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for "
                                  f"{type(self).__name__}.")


class _ScaffoldedCreator(SessionCreator):
    def __init__(self, scaffold=None, master="", config=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._session_manager = None

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            s = self._scaffold
            self._session_manager = SessionManager(
                local_init_op=s.local_init_op, local_init_feed_dict=s.local_init_feed_dict,
                ready_op=s.ready_op, ready_for_local_init_op=s.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager


class ChiefSessionCreator(_ScaffoldedCreator):
    """The chief's session: restored from `checkpoint_dir` (or the exact checkpoint file)
    when there is one, else initialized by the scaffold."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        super().__init__(scaffold, master, config)
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        s = self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=s.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=s.init_op, init_feed_dict=s.init_feed_dict,
            init_fn=s.init_fn)


class WorkerSessionCreator(_ScaffoldedCreator):
    """A non-chief worker's session: waits (up to `max_wait_secs`) for the chief to make the
    model ready."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        super().__init__(scaffold, master, config)
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, starts queue runners, tells the hooks, and returns the
    coordinated, hooked stack over it. Keeps the raw session and coordinator it made."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.coord = None
        self.tf_sess = None

    def create_session(self):
        self.tf_sess = self._session_creator.create_session()
        self.coord = Coordinator(clean_stop_exception_types=[])
        if get_collection(GraphKeys.QUEUE_RUNNERS):
            queue_runner.start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return CoordinatedSession(HookedSession(self.tf_sess, self._hooks), self.coord,
                                  self._stop_grace_period_secs)


def _check_step_fn(step_fn) -> None:
    names = tuple(inspect.signature(step_fn).parameters)
    if names not in (("step_context",), ("self", "step_context")):
        raise ValueError("`step_fn` may either have one `step_context` argument, or `self` and "
                         "`step_context` arguments if it's an instance method. Got "
                         f"{names} instead.")


class _MonitoredSession:
    """The shared body of MonitoredSession and SingularMonitoredSession."""

    StepContext = StepContext

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = get_default_graph().finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._sess = None
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator or ChiefSessionCreator(), self._hooks, stop_grace_period_secs)
        if should_recover:
            self._sess = RecoverableSession(self._coordinated_creator)
        else:
            self._sess = self._coordinated_creator.create_session()

    @property
    def graph(self):
        return self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """`Session.run` through the hooks (see HookedSession.run)."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Calls `step_fn(step_context)`: `step_context.session` is the raw session,
        `step_context.run_with_hooks(...)` a hooked run, `request_stop()` ends the loop.

        Raises:
          ValueError: `step_fn` does not take exactly `step_context` (after `self`).
        """
        _check_step_fn(step_fn)
        return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)

    def should_stop(self) -> bool:
        return self._sess is None or self._sess.should_stop()

    def close(self) -> None:
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_is_clean_end(exc_type):
            exc_type = None
        self._close_internal(exc_type)
        return exc_type is None

    def _close_internal(self, exc_type=None) -> None:
        try:
            if exc_type is None or issubclass(exc_type, KeyboardInterrupt):
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    get_default_graph()._unsafe_unfinalize()  # noqa: SLF001 - TF's own call

    def _is_closed(self) -> bool:
        return self._sess is None

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that runs hooks, and recreates itself after AbortedError/UnavailableError.

    Args:
      session_creator: a SessionCreator (default ChiefSessionCreator()).
      hooks: SessionRunHooks.
      stop_grace_period_secs: how long `close()` waits for queue-runner threads.
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A chief session with hooks and no recovery; `raw_session()` gives the tf.Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        return self._tf_sess()


def _resolve_pair(steps, secs, default_steps, default_secs):
    """TF's defaults for an every-N-steps / every-N-secs pair of which one may be given."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default_steps, default_secs
    return (None if steps is USE_DEFAULT else steps), (None if secs is USE_DEFAULT else secs)


def _positive(*values) -> bool:
    return any(v is not None and v > 0 for v in values)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession set up for training, as TF's.

    The chief restores from / initializes into `checkpoint_dir` and adds, besides `hooks` and
    `chief_only_hooks`: a StepCounterHook (every `log_step_count_steps`) and a
    SummarySaverHook (every 100 steps by default) writing to `summary_dir or checkpoint_dir`,
    and a CheckpointSaverHook (every 600 s by default). A non-chief waits up to
    `max_wait_secs` for the chief and runs only `hooks`.
    """
    save_summaries_steps, save_summaries_secs = _resolve_pair(
        save_summaries_steps, save_summaries_secs, 100, None)
    save_checkpoint_steps, save_checkpoint_secs = _resolve_pair(
        save_checkpoint_steps, save_checkpoint_secs, None, 600)
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                  master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                             every_n_steps=log_step_count_steps))
        if _positive(save_summaries_steps, save_summaries_secs):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs,
                                              output_dir=summary_dir))
    if checkpoint_dir and _positive(save_checkpoint_secs, save_checkpoint_steps):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs, scaffold=scaffold,
                                             save_graph_def=save_graph_def))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
