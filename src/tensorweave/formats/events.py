"""TensorBoard event files: TFRecord framing and a background writer that never stops training.

File layout (TF's): a TFRecord stream of serialized `Event`s, the first one carrying
`file_version = "brain.Event:2"`. Each record is `u64 length · u32 masked_crc32c(length) ·
data · u32 masked_crc32c(data)` (little-endian, CRC-32C). Files are named
`events.out.tfevents.<10-digit secs>.<host>.<pid>.<n><suffix>` (`n` a process-wide counter), so
two writers opened in the same second never share a file.

`EventFileWriter` serializes on the caller's thread and writes on one background thread
through a bounded queue. A disk failure (`OSError`: directory removed, disk full, permission)
is logged once, the events are dropped, and the writer retries with a new file every
`retry_secs`; nothing raises into, or waits long in, the training loop.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import queue
import socket
import struct
import threading
import time
import weakref
from collections.abc import Iterator

import google_crc32c

from tensorweave.proto import event_pb2

_log = logging.getLogger("tensorweave.summary")
_MASK_DELTA = 0xA282EAD8
_FILE_COUNTER = itertools.count()
_COUNTER_LOCK = threading.Lock()
_PUT_TIMEOUT_S = 2.0     # longest a full queue may hold up add_event before events drop
_FLUSH_TIMEOUT_S = 30.0  # longest flush()/close() wait for the writer thread


def masked_crc32c(data: bytes) -> int:
    """TFRecord's CRC: CRC-32C rotated right by 15 bits plus 0xa282ead8 (mod 2^32)."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame_record(data: bytes) -> bytes:
    """One TFRecord: length, its masked CRC, the data, the data's masked CRC."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + struct.pack("<I", masked_crc32c(data)))


def read_records(path) -> Iterator[bytes]:
    """The records of a TFRecord file, checking both CRCs of each.

    Raises:
      DataLossError: a truncated or corrupted record (the message names file and offset).
    """
    from tensorweave import errors

    with open(path, "rb") as f:
        offset = 0
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise errors.DataLossError(None, None, f"truncated record at {offset} in {path}")
            length, length_crc = struct.unpack("<QI", header)
            data, data_crc = f.read(length), f.read(4)
            if masked_crc32c(header[:8]) != length_crc:
                raise errors.DataLossError(None, None, f"corrupted record at {offset} in {path}")
            if len(data) < length or len(data_crc) < 4:
                raise errors.DataLossError(None, None, f"truncated record at {offset} in {path}")
            if masked_crc32c(data) != struct.unpack("<I", data_crc)[0]:
                raise errors.DataLossError(None, None, f"corrupted record at {offset} in {path}")
            yield data
            offset += 16 + length


def summary_iterator(path) -> Iterator[event_pb2.Event]:
    """The `Event` protos of an event file, in order (TF1's `tf.train.summary_iterator`)."""
    for data in read_records(path):
        yield event_pb2.Event.FromString(data)


def event_file_name(filename_suffix: str = "") -> str:
    """`events.out.tfevents.<secs>.<host>.<pid>.<n><suffix>`, unique within this process."""
    with _COUNTER_LOCK:
        n = next(_FILE_COUNTER)
    return (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{n}{filename_suffix or ''}")


class _EventFile:
    """The open file of one writer thread; turns every OSError into a logged failure.

    Not thread-safe: used only by the writer thread (and by close() after it stopped).
    """

    def __init__(self, logdir: str, suffix: str, retry_secs: float):
        self.logdir, self._suffix, self._retry_secs = logdir, suffix, retry_secs
        self.path = os.path.join(logdir, event_file_name(suffix))
        self._fh = None
        self._failed_at: float | None = None
        self.dropped = 0       # events lost to failures since the last successful write
        self.failures = 0      # failure episodes (each logged once)

    def open(self) -> None:
        try:
            os.makedirs(self.logdir, exist_ok=True)
            self._fh = open(self.path, "xb")  # noqa: SIM115 - closed in close()/_fail()
            version = event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2")
            self._fh.write(frame_record(version.SerializeToString()))
        except OSError as e:
            self._fail(e, "open")
            return
        if self._failed_at is not None:
            _log.warning("TensorBoard events: writing again, to %s (%d events were lost)",
                         self.path, self.dropped)
            self._failed_at, self.dropped = None, 0

    def write(self, data: bytes) -> None:
        if self._fh is None and not self._retry():
            self.dropped += 1
            return
        try:
            self._fh.write(frame_record(data))
        except OSError as e:
            self.dropped += 1
            self._fail(e, "write")

    def flush(self) -> None:
        if self._fh is None:
            self._retry()
            return
        try:
            self._fh.flush()
            if os.fstat(self._fh.fileno()).st_nlink == 0:
                raise FileNotFoundError(2, "the event file was deleted", self.path)
        except OSError as e:
            self._fail(e, "flush")

    def close(self) -> None:
        if self._fh is None:
            return
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
        except OSError as e:
            self._fail(e, "close")
        self._fh = None

    def _retry(self) -> bool:
        """Opens a new file when the last failure is `retry_secs` old; True when open."""
        if self._failed_at is None or time.monotonic() - self._failed_at < self._retry_secs:
            return self._fh is not None
        self.path = os.path.join(self.logdir, event_file_name(self._suffix))
        self._failed_at = time.monotonic()
        self.open()
        return self._fh is not None

    def _fail(self, error: OSError, action: str) -> None:
        if self._failed_at is None:
            self.failures += 1
            _log.error("TensorBoard events: cannot %s %s (%s). Training goes on; events are "
                       "dropped until a new file can be written (retry every %.0f s).",
                       action, self.path, error, self._retry_secs)
        self._failed_at = time.monotonic()
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError:
                pass


class _Flush:
    def __init__(self):
        self.done = threading.Event()


_CLOSE = object()
_OPEN_WRITERS: weakref.WeakSet = weakref.WeakSet()


class EventFileWriter:
    """Writes `Event` protos to a new event file in `logdir` from a background thread.

    Thread-safe. `add_event` never raises on I/O errors and waits at most ~2 s when the queue
    (`max_queue` events) stays full, after which events are dropped (logged once) until the
    writer catches up. The thread flushes every `flush_secs` even when no event arrives.
    Writers still open at interpreter exit are flushed and closed.
    """

    def __init__(self, logdir, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str | None = None, retry_secs: float | None = None):
        self._logdir = os.fspath(logdir)
        self._max_queue = max(int(max_queue), 1)
        self._flush_secs = max(float(flush_secs), 0.01)  # NOTE: 0 would spin the thread
        self._suffix = filename_suffix or ""
        self._retry_secs = float(retry_secs if retry_secs is not None
                                 else min(self._flush_secs, 10.0))
        self._lock = threading.Lock()
        self._closed = True
        self._stalled = False
        self._stuck = False
        self._queue_dropped = 0
        self._initialize()

    def _initialize(self) -> None:
        self._file = _EventFile(self._logdir, self._suffix, self._retry_secs)
        self._queue: queue.Queue = queue.Queue(self._max_queue)
        self._worker = threading.Thread(target=self._run, name="tensorweave-event-writer",
                                        daemon=True)
        self._closed = False
        self._worker.start()
        _OPEN_WRITERS.add(self)

    # -- caller side ---------------------------------------------------------------------
    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        """The event file being written (a new one after reopen() or a failure)."""
        return self._file.path

    @property
    def dropped_events(self) -> int:
        """Events lost to disk failures (since the last successful open) or a full queue."""
        return self._file.dropped + self._queue_dropped

    def add_event(self, event) -> None:
        """Queues `event` (an `Event` or its serialized bytes); a no-op once closed."""
        if self._closed:
            return
        data = event if isinstance(event, bytes) else event.SerializeToString()
        self._put(data)

    def _put(self, item) -> bool:
        try:
            self._queue.put_nowait(item)
            self._stalled = False
            return True
        except queue.Full:
            pass
        if not self._stalled:
            try:
                self._queue.put(item, timeout=_PUT_TIMEOUT_S)
                return True
            except queue.Full:
                self._stalled = True
                _log.warning("TensorBoard events: the writer for %s is not keeping up; "
                             "dropping events until it does", self._logdir)
        self._queue_dropped += 1
        return False

    def flush(self) -> None:
        """Writes every queued event to disk (waits up to 30 s for the writer thread)."""
        with self._lock:
            if self._closed:
                return
            marker = _Flush()
            done = self._put(marker) and marker.done.wait(_FLUSH_TIMEOUT_S)
            if not done:
                _log.warning("TensorBoard events: flush of %s did not complete", self.path)
            self._stuck = not done

    def close(self) -> None:
        """Flushes, stops the thread and closes the file; reopen() starts a new file."""
        self.flush()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._put(_CLOSE)
            # NOTE: a writer stuck on a hung disk is abandoned (daemon thread), not awaited
            self._worker.join(0.5 if self._stuck else _FLUSH_TIMEOUT_S)
            _OPEN_WRITERS.discard(self)

    def reopen(self) -> None:
        """After close(): starts a new event file (new name) and writer thread."""
        with self._lock:
            if self._closed:
                self._initialize()

    # -- writer thread -------------------------------------------------------------------
    def _run(self) -> None:
        f, q = self._file, self._queue
        f.open()
        next_flush = time.monotonic() + self._flush_secs
        while True:
            try:
                item = q.get(timeout=max(next_flush - time.monotonic(), 0.0))
            except queue.Empty:
                item = None
            if item is _CLOSE:
                f.close()
                return
            if isinstance(item, _Flush):
                f.flush()
                item.done.set()
            elif item is not None:
                f.write(item)
            if time.monotonic() >= next_flush:
                f.flush()
                next_flush = time.monotonic() + self._flush_secs


@atexit.register
def _close_open_writers() -> None:
    for writer in list(_OPEN_WRITERS):
        try:
            writer.close()
        except Exception:  # noqa: BLE001 - never fail interpreter exit
            pass
