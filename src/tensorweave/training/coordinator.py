"""`tf.train.Coordinator`: lets threads request and wait for a common stop, as TF1.

Thread-safety: every method may be called from any thread. The first exception passed to
`request_stop` (other than the clean-stop types, OutOfRangeError by default) is kept and
re-raised by `join` / `raise_requested_exception`.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from tensorweave import errors

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """A stop flag shared by threads, and the first exception that requested the stop."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        ex2 = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(ex2, self._clean_stop_exception_types) else ex

    @staticmethod
    def _as_exc_info(ex) -> tuple:
        if isinstance(ex, tuple):
            info = ex
        elif isinstance(ex, BaseException):
            info = (type(ex), ex, ex.__traceback__)
        else:
            info = sys.exc_info()
        if len(info) != 3 or not info[0] or not info[1]:
            err = ValueError("ex must be a tuple or sys.exc_info must return the current "
                             f"exception: {info}")
            info = (ValueError, err, None)
        return info

    def request_stop(self, ex=None) -> None:
        """Requests the threads to stop; `ex` (exception or exc_info) is kept for `join`."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined and ex is not None:
                raise self._as_exc_info(ex)[1]
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    self._exc_info_to_raise = self._as_exc_info(ex)
                self._stop_event.set()

    def clear_stop(self) -> None:
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager requesting a stop when its body raises (the exception is kept)."""
        try:
            yield
        except:  # noqa: E722 - TF requests a stop on any exception
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None) -> bool:
        """Blocks until a stop is requested (or `timeout` s pass); True when stopped."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    @property
    def joined(self) -> bool:
        return self._joined

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for a stop request, then up to the grace period for `threads` to end.

        Raises:
          The exception passed to `request_stop`, if any; else RuntimeError naming the
          threads still alive after the grace period (unless `ignore_live_threads`).
        """
        with self._lock:
            threads = list(self._registered_threads.union(set(threads or ())))
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        wait, left = 0.001, stop_grace_period_secs
        while any(t.is_alive() for t in threads) and left >= 0.0:
            time.sleep(wait)
            left -= wait
            wait = max(min(2 * wait, left), 0.001)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1].with_traceback(self._exc_info_to_raise[2])
            if stragglers and not ignore_live_threads:
                raise RuntimeError("Coordinator stopped with threads still running: "
                                   + " ".join(stragglers))

    def raise_requested_exception(self) -> None:
        with self._lock:
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1].with_traceback(self._exc_info_to_raise[2])


class LooperThread(threading.Thread):
    """A daemon thread that calls `run_loop()` every `timer_interval_secs` (first call at
    once; back-to-back when None) until `coord` stops; an exception stops the coordinator.

    Either pass `target` (called with `args`/`kwargs`) or subclass and override `run_loop`.
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args, self._kwargs = args or (), kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts and returns a LooperThread calling `target`."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.time())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once when the thread starts."""

    def stop_loop(self) -> None:
        """Called once when the thread ends."""

    def run_loop(self) -> None:
        if self._target:
            self._target(*self._args, **self._kwargs)
