"""`tf.train.SessionManager`: a session that is ready to train, from a checkpoint, from the
init ops, or by waiting for the chief to initialize the model (TF1 session_manager.py).

"Ready" means `ready_op` reports no uninitialized variable (an empty string vector).
`local_init_op` runs once `ready_for_local_init_op` reports nothing missing.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from tensorweave import errors
from tensorweave.client.session import Session
from tensorweave.formats.checkpoint.state import get_checkpoint_state
from tensorweave.framework.graph import get_default_graph

_log = logging.getLogger("tensorweave")


def _maybe_name(obj) -> str:
    if obj is None:
        return "None"
    return getattr(obj, "name", None) or f"<no name for {type(obj)}>"


def _ready(op, sess, msg):
    """(True, None) when `op` reports nothing uninitialized; else (False, what is missing).

    Raises:
      FailedPreconditionError: `op` failed for another reason than uninitialized values.
    """
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            _log.warning("%s : error [%s]", msg, e)
            raise
        return False, str(e)
    if value is None or getattr(value, "dtype", None) == np.bool_ or np.size(value) == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                      for v in np.ravel(value))
    return False, "Variables not initialized: " + names


class _CountDownTimer:
    def __init__(self, duration_secs):
        self._start = time.time()
        self._duration = duration_secs

    def secs_remaining(self) -> float:
        return max(0.0, self._duration - (time.time() - self._start))


class SessionManager:
    """Creates sessions that restore, initialize, or wait until a model is ready.

    Raises (constructor):
      ValueError: `ready_for_local_init_op` without `local_init_op`.
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op [{ready_for_local_init_op}]")
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None

    # -- restoring ---------------------------------------------------------------------------
    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        """(session, restored?): a new session, restored from a checkpoint when one exists."""
        self._target = master
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = Session(self._target, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        ckpt = self._wait_for_checkpoint(checkpoint_dir, wait_for_checkpoint, max_wait_secs)
        if ckpt is None:
            return sess, False
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def _wait_for_checkpoint(self, checkpoint_dir, wait, max_wait_secs):
        waited = 0
        ckpt = get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if not wait or waited >= max_wait_secs:
                return None
            _log.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            waited += self._recovery_wait_secs
            ckpt = get_checkpoint_state(checkpoint_dir)
        return ckpt

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session with the model restored from a checkpoint, or initialized by `init_op`
        and `init_fn(sess)`; then local_init_op; then checked ready.

        Raises:
          RuntimeError: nothing to initialize with, or the model is not ready afterwards.
        """
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError("Init operations did not make model ready for local_init.  "
                               f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, "
                               f"error: {msg}")
        ready, msg = self._model_ready(sess)
        if not ready:
            raise RuntimeError("Init operations did not make model ready.  Init op: "
                               f"{_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                               f"{self._local_init_op}, error: {msg}")
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """(session, True) when a checkpoint made the model ready; else (session, False)."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        local_ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not local_ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s",
                      source, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        _log.info("Restored model from %s", source)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A session once another process (the chief) has made the model ready.

        Blocks, retrying every `recovery_wait_secs`.
        Raises:
          DeadlineExceededError: not ready within `max_wait_secs`.
        """
        self._target = master
        timer = _CountDownTimer(float("Inf") if max_wait_secs is None else max_wait_secs)
        while True:
            sess = Session(self._target, graph=self._graph, config=config)
            ready_msg = None
            local_ok, local_msg = self._try_run_local_init_op(sess)
            if local_ok:
                ready, ready_msg = self._model_ready(sess)
                if ready:
                    return sess
            self._safe_close(sess)
            if timer.secs_remaining() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs} secs.")
            _log.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                      local_msg, ready_msg)
            time.sleep(self._recovery_wait_secs)

    # -- readiness ---------------------------------------------------------------------------
    @staticmethod
    def _safe_close(sess) -> None:
        try:
            sess.close()
        except Exception:  # noqa: BLE001 - closing a session that is being discarded
            pass

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        _log.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        _log.info("Done running local_init_op.")
        return True, None
