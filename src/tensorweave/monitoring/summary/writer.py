"""`tf.summary.FileWriter` and `FileWriterCache`, as TF1's summary/writer/writer.py.

    writer = tf.summary.FileWriter("/tmp/logs", sess.graph)
    for step in range(steps):
        _, summ = sess.run([train_op, merged])
        writer.add_summary(summ, step)
    writer.close()

Events go through `EventFileWriter` (event_file.py): a background thread, a bounded queue,
disk failures logged and never raised into the training loop.
"""

from __future__ import annotations

import threading
import time
import warnings

from tensorweave.formats.events import EventFileWriter
from tensorweave.framework.graph import Graph, get_default_graph
from tensorweave.proto import event_pb2, graph_pb2, meta_graph_pb2, summary_pb2

_CLOSED_WARNING = ("Attempting to use a closed FileWriter. The operation will be a noop unless "
                   "the FileWriter is explicitly reopened.")


def _as_message(value, cls):
    """`value` as our `cls`: itself, parsed from bytes, or re-parsed from a foreign proto with
    the same layout (e.g. TensorFlow's or tensorboard's)."""
    if isinstance(value, cls):
        return value
    if isinstance(value, (bytes, bytearray)):
        return cls.FromString(bytes(value))
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # 0-d object array
        return _as_message(value.item(), cls)
    if hasattr(value, "SerializeToString"):
        return cls.FromString(value.SerializeToString())
    raise TypeError(f"Expected a {cls.__name__} (or its serialized bytes), got "
                    f"{type(value).__name__}")


class FileWriter:
    """Writes `Summary` protos, graphs and run metadata to an event file in `logdir`.

    Args:
      logdir: directory for the event file (created if needed, on the writer thread).
      graph: optional `Graph` (or deprecated `GraphDef`) written at once, with a MetaGraphDef.
      max_queue: events queued before `add_*` waits (briefly) for the writer thread.
      flush_secs: how often the writer thread flushes to disk.
      graph_def: deprecated alias of `graph`.
      filename_suffix: appended to the event file's name.
      session: accepted for TF1 compatibility; events are written directly either way.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        self._session_run_tags: set[str] = set()
        self._seen_summary_tags: set[str] = set()
        self._tags_lock = threading.Lock()
        if graph is not None or graph_def is not None:
            true_graph_def = self.add_graph(graph=graph, graph_def=graph_def)
            self.add_meta_graph(meta_graph_pb2.MetaGraphDef(graph_def=true_graph_def))

    # -- context manager and life cycle --------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def flush(self) -> None:
        """Writes everything queued to disk."""
        self._warn_if_closed()
        self.event_writer.flush()

    def close(self) -> None:
        """Flushes and closes the event file; later calls are no-ops until reopen()."""
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        """Reopens a closed writer on a new event file in the same logdir."""
        self.event_writer.reopen()
        self._closed = False

    def _warn_if_closed(self) -> None:
        if self._closed:
            warnings.warn(_CLOSED_WARNING, stacklevel=3)

    # -- events --------------------------------------------------------------------------
    def add_event(self, event) -> None:
        """Writes `event` (an `Event` proto) as is."""
        self._warn_if_closed()
        self.event_writer.add_event(_as_message(event, event_pb2.Event))

    def _add_event(self, event, global_step) -> None:
        self._warn_if_closed()
        event.wall_time = time.time()
        if global_step is not None:
            event.step = int(global_step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None) -> None:
        """Writes a `Summary` (proto or the serialized bytes `sess.run` returns).

        As TF, only the first value of each tag keeps its `metadata` (saves space).
        """
        summary = summary_pb2.Summary.FromString(
            _as_message(summary, summary_pb2.Summary).SerializeToString())
        with self._tags_lock:
            for value in summary.value:
                if not value.HasField("metadata"):
                    continue
                if value.tag in self._seen_summary_tags:
                    value.ClearField("metadata")
                else:
                    self._seen_summary_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None) -> None:
        """Writes a `SessionLog` (START after a restore makes TensorBoard drop later steps)."""
        self._add_event(event_pb2.Event(
            session_log=_as_message(session_log, event_pb2.SessionLog)), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes a graph (a `Graph`, or a deprecated `GraphDef`); returns the GraphDef written.

        Raises:
          ValueError: both `graph` and `graph_def` are given.
          TypeError: neither is a `Graph` nor a `GraphDef`.
        """
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        given = graph if graph is not None else graph_def
        if isinstance(given, Graph):
            true_graph_def = given.as_graph_def(add_shapes=True)
        elif hasattr(given, "node") and hasattr(given, "SerializeToString"):
            true_graph_def = _as_message(given, graph_pb2.GraphDef)
        else:
            raise TypeError("The passed graph must be an instance of `Graph` or the deprecated "
                            "`GraphDef`")
        event = event_pb2.Event(graph_def=true_graph_def.SerializeToString())
        self._add_event(event, global_step)
        return true_graph_def

    def add_meta_graph(self, meta_graph_def, global_step=None) -> None:
        """Writes a `MetaGraphDef`.

        Raises:
          TypeError: `meta_graph_def` is not a MetaGraphDef.
        """
        if not isinstance(meta_graph_def, meta_graph_pb2.MetaGraphDef):
            raise TypeError("meta_graph_def must be type MetaGraphDef, saw type: "
                            f"{type(meta_graph_def)}")
        event = event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString())
        self._add_event(event, global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None) -> None:
        """Writes a step's `RunMetadata` (TensorBoard's "Session runs" in the Graph tab).

        Raises:
          ValueError: `tag` was already used by this writer.
        """
        with self._tags_lock:
            if tag in self._session_run_tags:
                raise ValueError("The provided tag was already used for this event type")
            self._session_run_tags.add(tag)
        tagged = event_pb2.TaggedRunMetadata(tag=tag,
                                             run_metadata=run_metadata.SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)


class FileWriterCache:
    """One `FileWriter` per logdir, shared by everyone who asks for it. Thread-safe."""

    _cache: dict[str, FileWriter] = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir) -> FileWriter:
        """The cached FileWriter of `logdir`, created with the default graph on first use."""
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir, graph=get_default_graph())
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear() -> None:
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}


__all__ = ["FileWriter", "FileWriterCache"]
