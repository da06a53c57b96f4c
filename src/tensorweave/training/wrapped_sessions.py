"""The session layers inside a monitored session (TF1 monitored_session.py), outermost first:

    _RecoverableSession   recreates the whole stack after AbortedError / UnavailableError
    _CoordinatedSession   a Coordinator: queue-runner errors surface here; close joins threads
    _HookedSession        hooks' before_run / after_run around every run
    Session               the raw tf.Session

Each layer's `should_stop()` asks its own `_check_stop()` and then the layer inside.
"""

from __future__ import annotations

import logging

from tensorweave import errors
from tensorweave.proto.config_pb2 import RunMetadata, RunOptions
from tensorweave.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunValues,
)

_log = logging.getLogger("tensorweave")
PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
_PREEMPTED_HELP = (
    "This may be due to a preemption in a connected worker or parameter server. The current "
    "session will be closed and a new session will be created. This error may also occur due "
    "to a gRPC failure caused by high memory or network bandwidth usage in the parameter "
    "servers. If this error occurs repeatedly, try increasing the number of parameter servers "
    "assigned to the job. Error: %s")


class StepContext:
    """What `run_step_fn`'s `step_fn(step_context)` gets: the raw session and a hooked run."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        """Ends the iterations: raises StopIteration, which the monitored session's `with`
        block treats as a clean end."""
        raise StopIteration("step_fn has requested the iterations to stop.")


class WrappedSession:
    """A session around another session; subclasses override `_check_stop` and `run`."""

    def __init__(self, sess):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, WrappedSession)

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def _check_stop(self) -> bool:
        return False

    def close(self) -> None:
        if self._sess:
            try:
                self._sess.close()
            except PREEMPTION_ERRORS as e:
                _log.error("An error occurred when attempting to close the session. This may "
                           "be due to a preemption in a connected worker or parameter server. "
                           "Error: %s", e)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        return step_fn(StepContext(raw_session, run_with_hooks or self.run))


class RecoverableSession(WrappedSession):
    """Recreates the session (via `sess_creator`, hooks' after_create_session included) when
    a run or a stop check fails with AbortedError or UnavailableError, and retries."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        while True:
            try:
                return self._sess_creator.create_session()
            except PREEMPTION_ERRORS as e:
                _log.info("An error was raised while a session was being created. "
                          + _PREEMPTED_HELP, e)

    def _check_stop(self) -> bool:
        try:
            return self._sess._check_stop() if self._sess else True  # noqa: SLF001 - a layer
        except PREEMPTION_ERRORS as e:
            _log.info("An error was raised while considering whether the session is complete. "
                      + _PREEMPTED_HELP, e)
            self.close()
            self._sess = self._create_session()
            return False
        except Exception:
            self._sess = None
            raise

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                      run_metadata=run_metadata)
            except PREEMPTION_ERRORS as e:
                _log.info("An error was raised. " + _PREEMPTED_HELP, e)
                self.close()
                self._sess = None

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                raw = self._sess_creator.tf_sess or raw_session
                return self._sess.run_step_fn(step_fn, raw, self._sess.run)
            except PREEMPTION_ERRORS as e:
                _log.info("An error was raised. " + _PREEMPTED_HELP, e)
                self.close()
                self._sess = None


class CoordinatedSession(WrappedSession):
    """Surfaces errors that threads reported to `coord`; `close` stops and joins them within
    `stop_grace_period_secs` before closing the session."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self) -> None:
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception:  # noqa: BLE001 - as TF: a failing close does not mask the join
                pass

    def _reraise_coordinated(self, original):
        """A thread's error takes precedence when it is a preemption; else the original."""
        try:
            self._coord.raise_requested_exception()
        except PREEMPTION_ERRORS:
            raise
        except Exception:  # noqa: BLE001, S110 - the original error is the one to raise
            pass
        raise original

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except PREEMPTION_ERRORS:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised below
            self._reraise_coordinated(e)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        try:
            return self._sess.run_step_fn(step_fn, raw_session, run_with_hooks)
        except PREEMPTION_ERRORS:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised below
            self._reraise_coordinated(e)


def _merge_run_options(options, incoming) -> None:
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.output_partition_graphs |= incoming.output_partition_graphs
    options.report_tensor_allocations_upon_oom |= incoming.report_tensor_allocations_upon_oom
    options.debug_options.MergeFrom(incoming.debug_options)


def _raise_if_feeds_intersect(feeds1, feeds2, message) -> None:
    common = set(feeds1) & set(feeds2)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {sorted(str(k) for k in common)}")


class HookedSession(WrappedSession):
    """Calls every hook's `before_run` and `after_run` around each `run`; a hook's
    `request_stop()` makes `should_stop()` True after the step."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` plus the hooks' requests in one step.

        Raises:
          RuntimeError: called after a stop was requested, or two feeders of one tensor.
        """
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._sess)
        options = options or RunOptions()
        feed_dict = self._call_hook_before_run(context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata or RunMetadata()
        outputs = super().run(actual_fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(context, SessionRunValues(results=outputs.get(hook), options=options,
                                                     run_metadata=run_metadata))
        self._should_stop = self._should_stop or context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, context, fetch_dict, user_feed_dict, options):
        hook_feeds: dict = {}
        for hook in self._hooks:
            request = hook.before_run(context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        hook_feeds.update(user_feed_dict)
        return hook_feeds


def exc_is_clean_end(exc_type) -> bool:
    """True for the exceptions that end a monitored loop normally (input exhausted, a
    step_fn's request_stop)."""
    return exc_type is not None and issubclass(exc_type, (errors.OutOfRangeError, StopIteration))

