"""How a new bundle replaces the one at its prefix with a single commit point.

TensorFlow's readers find a checkpoint `P` by fixed names: `P.index`, and the data files
`P.data-{i:05d}-of-{n:05d}` where `n` is the `num_shards` that the index header states. Two
files cannot be renamed at once, so writing new data over `P.data-00000-of-00001` and then
the new index (TF's own BundleWriter order) leaves, between the two renames, new data under
the old index: a kill there loses the only checkpoint (`DataLossError: Checksum does not
match`).

The design: the new generation never takes a file name that the committed index refers to.
Its shard count is the natural one (`n`), unless the committed checkpoint at `P` already uses
`n` shards; then the new one is written with `n + 1`, the extra last shard an empty data file
(TF's readers open only the shards that entries name, and TF's own writer leaves empty shards
in sharded saves, so real TensorFlow reads it under the names it expects). Saving to the same
prefix alternates between the two layouts. The steps:

  1. data (and index) are written under temporary names `<final>.tempstate-<host>-<pid>-<r>`;
  2. the data files are renamed to their final names, which are new names: the committed
     index does not refer to them, so the previous checkpoint stays whole;
  3. the index is renamed over `P.index`: the commit point, one atomic rename;
  4. the previous generation's data files are removed.

A kill before 3 leaves the previous checkpoint readable, after 3 the new one. Leftovers of a
killed save (temporaries, data files that no committed index names, sharded-save part
directories) are removed by the next
save to that directory (`sweep`). A temporary written by another process is removed only when
that process is known to be dead (same host, no such pid); a temporary in TF's own format
(`.tempstate<digits>`) only when it belongs to the prefix being saved.

The guarantee is against the death of the writing process; files are not fsynced (nor are
they by TensorFlow), so a power loss may still lose recent writes.
"""

from __future__ import annotations

import glob
import os
import random
import re
import shutil
import socket

from tensorweave.formats.checkpoint.table import read_table
from tensorweave.proto import tensor_bundle_pb2

_HOST = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"
_OURS = re.compile(r"\.tempstate-(?P<host>[A-Za-z0-9._]+)-(?P<pid>\d+)-[0-9a-f]+$")
_TFS = re.compile(r"\.tempstate\d+$")
_DATA = re.compile(r"\.data-\d{5}-of-(?P<n>\d{5})$")


def temp_name(path: str) -> str:
    """A fresh temporary name beside `path` that says which process writes it."""
    return f"{path}.tempstate-{_HOST}-{os.getpid()}-{random.getrandbits(64):016x}"


def committed_shards(prefix: str) -> int | None:
    """`num_shards` in the header of `prefix.index`, or None when no readable index exists."""
    try:
        with open(f"{prefix}.index", "rb") as f:
            items = read_table(f.read(), f"{prefix}.index")
        header = tensor_bundle_pb2.BundleHeaderProto.FromString(items[0][1])
    except Exception:  # noqa: BLE001 - missing, truncated or foreign: nothing is committed
        return None
    return header.num_shards or None


def layout(prefix: str, shards: int) -> int:
    """The `num_shards` a new bundle of `shards` real shards at `prefix` is written with:
    `shards`, or `shards + 1` (an empty last shard) when the committed one uses `shards`."""
    return shards + 1 if committed_shards(prefix) == shards else shards


def remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def drop_stale_data(prefix: str, keep: int | None) -> None:
    """Removes `prefix`'s data files of every shard count but `keep` (the committed one)."""
    for path in glob.glob(glob.escape(prefix) + ".data-?????-of-?????"):
        m = _DATA.search(path)
        if m and int(m["n"]) != keep:
            remove_quietly(path)


def sweep(prefix: str, keep=()) -> None:
    """Removes what killed saves left in `prefix`'s directory: dead writers' temporaries,
    `prefix`'s data files that its committed index does not name, and the part directories
    of `prefix`'s sharded saves (`<prefix>_temp_<uuid>`, TF2's `<prefix>_temp`) but those in
    `keep` (the parts being merged now). A save to a prefix supersedes any other save to the
    same prefix still in flight. Best effort, never raises."""
    directory = os.path.dirname(prefix) or "."
    base = os.path.basename(prefix)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    parts = re.compile(re.escape(base) + r"_temp(_[0-9a-f]{32})?$")
    kept = {os.path.abspath(k) for k in keep}
    for name in names:
        path = os.path.join(directory, name)
        if ".tempstate" in name and _orphaned(name, base):
            remove_quietly(path)
        elif parts.match(name) and os.path.abspath(path) not in kept:
            shutil.rmtree(path, ignore_errors=True)
    drop_stale_data(prefix, committed_shards(prefix))


def _orphaned(name: str, base: str) -> bool:
    m = _OURS.search(name)
    if m:
        return m["host"] == _HOST and not _alive(int(m["pid"]))
    return bool(_TFS.search(name)) and _of_prefix(name, base)


def _of_prefix(name: str, base: str) -> bool:
    stem = _TFS.sub("", name)
    return stem == f"{base}.index" or (bool(_DATA.search(stem)) and _DATA.sub("", stem) == base)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # NOTE: this process's own temporaries belong to saves still in flight
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def create_empty(path: str) -> None:
    """Creates (or truncates) an empty file: the padding shard of a `layout` of n + 1."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))


def commit(prefix: str, tmp_index: str, data_moves: list[tuple[str, str]],
           num_shards: int, shards: int) -> None:
    """Steps 2-4 of the module docstring: moves the data files in (`data_moves`: (from, to),
    renamed; `to` is never a name the committed index refers to), creates the padding shard
    when `num_shards > shards`, renames `tmp_index` over `prefix.index` (the commit), then
    drops the previous generation's data files.

    Raises:
      OSError: a rename or create failed (nothing committed unless the index rename ran).
    """
    for src, dst in data_moves:
        os.replace(src, dst)
    if num_shards > shards:
        create_empty(f"{prefix}.data-{shards:05d}-of-{num_shards:05d}")
    os.replace(tmp_index, f"{prefix}.index")
    drop_stale_data(prefix, num_shards)


__all__ = ["temp_name", "committed_shards", "layout", "sweep", "commit", "remove_quietly"]
