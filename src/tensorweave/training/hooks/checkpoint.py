"""`CheckpointSaverHook` and its listeners: checkpoints every N steps or seconds, at session
creation and at the end (TF's basic_session_run_hooks)."""

from __future__ import annotations

import logging
import os

from tensorweave.framework.graph import GraphKeys, get_collection, get_default_graph
from tensorweave.monitoring.summary.writer import FileWriterCache
from tensorweave.proto.event_pb2 import SessionLog
from tensorweave.training.graph_io import write_graph
from tensorweave.training.hooks.basic import global_step_read_or_raise
from tensorweave.training.hooks.timers import SecondOrStepTimer
from tensorweave.training.meta_graph import create_meta_graph_def
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook

_log = logging.getLogger("tensorweave")


class CheckpointSaverListener:
    """Called around each save of a `CheckpointSaverHook`; `after_save` returning True
    requests a stop."""

    def begin(self) -> None:
        pass

    def before_save(self, session, global_step_value) -> None:
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves `checkpoint_dir/model.ckpt-<step>` every `save_secs` or `save_steps`, once when
    the session is created and once at the end; writes `graph.pbtxt`, the graph and the meta
    graph to the directory's event file, and a CHECKPOINT SessionLog per save.

    Raises:
      ValueError (constructor): both `saver` and `scaffold`, or not exactly one period.
      RuntimeError (begin): no global step; no saver in SAVERS (or more than one).
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        _log.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver, self._scaffold = saver, scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []
        self._steps_per_run = 1
        self._save_graph_def = save_graph_def

    def _set_steps_per_run(self, steps_per_run) -> None:
        self._steps_per_run = steps_per_run

    def begin(self):
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = global_step_read_or_raise("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = session.run(self._global_step_tensor)
        if self._save_graph_def:
            self._write_graph()
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def _write_graph(self) -> None:
        # NOTE: here, not in begin(): other hooks may still add to the graph in their begin().
        graph = get_default_graph()
        graph_def = graph.as_graph_def(add_shapes=True)
        write_graph(graph_def, self._checkpoint_dir, "graph.pbtxt")
        saver = self._get_saver()
        meta = create_meta_graph_def(graph_def=graph_def,
                                     saver_def=saver.saver_def if saver else None)
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(meta)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if not self._timer.should_trigger_for_step(run_values.results + self._steps_per_run):
            return
        step = run_context.session.run(self._global_step_tensor)
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session):
        last_step = session.run(self._global_step_tensor)
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step) -> bool:
        """Saves at `step`; True when a listener asks to stop."""
        _log.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        _log.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be stopped. "
                          "listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver "
                               "to the collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver
