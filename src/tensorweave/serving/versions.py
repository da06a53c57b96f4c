"""The versions of one model: numbered directories under `model_base_path`, the newest
complete one served, new versions picked up while running, old ones unloaded once their
requests finish (TF Serving's file-system source with the `latest` version policy).

A version directory counts only when it is complete: `saved_model.pb` parses and every file of
the variables checkpoint it needs is there. A half-written directory is skipped until a later
poll finds it complete; a complete one that fails to load is reported (GetModelStatus) and
retried only when its files change. A version is swapped in only after it loaded whole.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from dataclasses import dataclass

from tensorweave import errors
from tensorweave.saved_model import constants, loader
from tensorweave.serving.servable import Servable, invalid, not_found

_LOG = logging.getLogger("tensorweave")

# ModelVersionStatus.State
START, LOADING, AVAILABLE, UNLOADING, END = 10, 20, 30, 40, 50


@dataclass
class VersionStatus:
    version: int
    state: int
    error_code: int = errors.OK
    error_message: str = ""


def version_dirs(base_path: str) -> dict[int, str]:
    """{version: directory} of the numbered subdirectories of `base_path`."""
    try:
        names = os.listdir(base_path)
    except FileNotFoundError:
        return {}
    return {int(n): os.path.join(base_path, n) for n in names
            if n.isdigit() and os.path.isdir(os.path.join(base_path, n))}


def is_complete(export_dir: str) -> bool:
    """Whether a SavedModel directory has been written whole (see the module docstring)."""
    try:
        model = loader.read_saved_model(export_dir)
    except (OSError, ValueError):
        return False
    if not any(m.HasField("saver_def") for m in model.meta_graphs):
        return True
    variables = os.path.join(export_dir, constants.VARIABLES_DIRECTORY)
    try:
        files = os.listdir(variables)
    except OSError:
        return False
    if constants.VARIABLES_FILENAME + ".index" not in files:
        return False
    shards = [f for f in files if f.startswith(constants.VARIABLES_FILENAME + ".data-")]
    if not shards:
        return False
    total = int(shards[0].rsplit("-of-", 1)[1])
    return len(shards) == total


def _fingerprint(export_dir: str) -> tuple:
    out = []
    for root, _, files in os.walk(export_dir):
        for f in files:
            st = os.stat(os.path.join(root, f))
            out.append((os.path.join(root, f), st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


class ModelVersions:
    """The servable versions of model `name` under `base_path`.

    `poll()` brings the loaded version in line with the disk (the poll thread calls it every
    `poll_seconds`); `serving(version)` is a context manager lending a loaded Servable to one
    request. Thread-safe.
    """

    def __init__(self, name: str, base_path: str, poll_seconds: float = 1.0,
                 load=Servable):
        self.name, self.base_path, self.poll_seconds = name, base_path, poll_seconds
        self._load = load
        self._lock = threading.Lock()
        self._current: Servable | None = None
        self._status: dict[int, VersionStatus] = {}
        self._failed: dict[int, tuple] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the poll loop ------------------------------------------------------------------------
    def start(self) -> None:
        self.poll()
        self._thread = threading.Thread(target=self._loop, name=f"poll-{self.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        with self._lock:
            current, self._current = self._current, None
        if current is not None:
            current.unload()

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            try:
                self.poll()
            except Exception:  # NOTE: a bad poll must not end serving; it is logged
                _LOG.exception("polling %s failed", self.base_path)

    def poll(self) -> None:
        """Loads the newest complete version if it is not the one served; unloads the old."""
        dirs = version_dirs(self.base_path)
        for version in sorted(dirs, reverse=True):
            path = dirs[version]
            if self._current is not None and self._current.version == version:
                return
            if self._failed.get(version) == _fingerprint(path) or not is_complete(path):
                continue
            if self._swap_in(version, path):
                return
        if self._current is not None and self._current.version not in dirs:
            self._retire(None)

    def _swap_in(self, version: int, path: str) -> bool:
        self._status[version] = VersionStatus(version, LOADING)
        try:
            servable = self._load(version, path)
        except Exception as e:  # NOTE: any load failure is this version's status, not ours
            code = getattr(e, "error_code", errors.UNKNOWN)
            message = getattr(e, "message", None) or str(e)
            _LOG.error("loading %s version %d failed: %s", self.name, version, message)
            self._status[version] = VersionStatus(version, END, code, message)
            self._failed[version] = _fingerprint(path)
            return False
        self._status[version] = VersionStatus(version, AVAILABLE)
        _LOG.info("serving %s version %d from %s", self.name, version, path)
        self._retire(servable)
        return True

    def _retire(self, new: Servable | None) -> None:
        with self._lock:
            old, self._current = self._current, new
        if old is not None:
            self._status[old.version] = VersionStatus(old.version, UNLOADING)
            old.unload()
            self._status[old.version] = VersionStatus(old.version, END)

    # -- requests -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def serving(self, version: int | None = None, label: str | None = None):
        """Lends the servable for `version` (None: the newest) to the body of the `with`.

        Raises:
          NotFoundError: no such version is being served (TF Serving's message).
          InvalidArgumentError: a version label (labels are not configured).
        """
        if label:
            raise invalid(f"Unrecognized servable version label: {label}")
        with self._lock:
            servable = self._current
            if servable is None or (version is not None and servable.version != version):
                what = f"Latest({self.name})" if version is None else \
                    f"Specific({self.name}, {version})"
                raise not_found(f"Servable not found for request: {what}")
            servable.acquire()
        try:
            yield servable
        finally:
            servable.release()

    def statuses(self, version: int | None = None) -> list[VersionStatus]:
        """The state of every version seen (or of `version`).

        Raises:
          NotFoundError: no version seen (or not that one).
        """
        found = [s for v, s in sorted(self._status.items()) if version in (None, v)]
        if not found:
            if version is None:
                raise not_found(f"Could not find any versions of model {self.name}")
            raise not_found(f"Could not find version {version} of model {self.name}")
        return found
