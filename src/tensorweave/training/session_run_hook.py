"""The `SessionRunHook` protocol of TF1's monitored sessions (`tf.train.SessionRunHook`).

A hook sees one `MonitoredSession`'s life:

    begin()                                  once, before the session exists (graph editable)
    after_create_session(session, coord)     after each (re)creation; `session` is the raw one
    before_run(run_context) -> SessionRunArgs | None     before every `run`
    after_run(run_context, run_values)       after every `run` that did not raise
    end(session)                             once, when the monitored session closes cleanly

`before_run` may add fetches, feeds and RunOptions to the caller's `run`; their results come
back in `run_values.results`. A hook stops the loop with `run_context.request_stop()`.
"""

from __future__ import annotations

from typing import NamedTuple


class SessionRunHook:
    """Base class: every method is a no-op, so a hook overrides only what it needs."""

    def begin(self) -> None:
        """Called once before the session is created; the graph may still be changed."""

    def after_create_session(self, session, coord) -> None:
        """Called when a (new) session exists and the graph is finalized."""

    def before_run(self, run_context):
        """Returns a `SessionRunArgs` to add to the coming `run`, or None."""
        return None

    def after_run(self, run_context, run_values) -> None:
        """Called with the results of this hook's `SessionRunArgs.fetches`."""

    def end(self, session) -> None:
        """Called once at the end of a session that closes without an exception."""


class SessionRunArgs(NamedTuple("SessionRunArgs", [("fetches", object), ("feed_dict", object),
                                                    ("options", object)])):
    """What a hook adds to a `run`: `fetches` (any fetch structure), `feed_dict`, RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(NamedTuple):
    """What a hook gets back: its fetches' `results`, the step's `options` and `run_metadata`."""

    results: object
    options: object
    run_metadata: object


class SessionRunContext:
    """The caller's `run` arguments and the raw session, shared by the hooks of one step."""

    def __init__(self, original_args: SessionRunArgs, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Ends the loop after this step: the monitored session's `should_stop()` turns True."""
        self._stop_requested = True
