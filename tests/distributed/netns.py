"""Separate "hosts" for tests: Linux network namespaces joined by veth pairs on a bridge.

`Hosts(n)` makes n namespaces, host i with address 198.18.0.(i+1)/24 on its `eth0` (198.18.0.0/15
is set aside for network testing: nothing leaves the machine), each veth's other end on a bridge
that lives in a namespace of its own (never the root namespace). `run(i, argv)` starts a process
on host i (`ip netns exec`). Faults: `link_down(i)` takes host i's cable out (its veth end on the
bridge goes down: its peers hear nothing more), `drop(i)` makes host i drop every packet it
sends (blackhole routes: connections stall instead of failing), `heal(i)` undoes both.

Names are unique per run (`tw<pid>x<n>...`: the process id and a counter); `close()` ends the
processes started there and deletes every namespace (their links go with them); a new `Hosts`
first sweeps away those of runs whose process is gone (killed before it could clean up).
`unavailable()` says why namespaces cannot be made here (no privilege, no `ip`), or None.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess

SUBNET_PREFIX = "198.18.0."
_counter = itertools.count()


def _ip(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    argv = ["ip", *(["-n", ns] if ns else []), *args]
    return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=20)


def unavailable() -> str | None:
    """Why network namespaces cannot be made here, or None when they can."""
    if not shutil.which("ip"):
        return "no `ip` command (iproute2) on this machine"
    probe = f"twprobe{os.getpid()}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip() or 'no privilege'}"
    _ip("netns", "del", probe, check=False)
    return None


class Hosts:
    """`n` namespace hosts on one bridge. Use as a context manager (or call `close`)."""

    def __init__(self, n: int):
        sweep_stale()
        self.tag = f"tw{os.getpid()}x{next(_counter)}"
        self.bridge_ns = f"{self.tag}br"
        self.names = [f"{self.tag}h{i}" for i in range(n)]
        self.addresses = [f"{SUBNET_PREFIX}{i + 1}" for i in range(n)]
        self._procs: list[subprocess.Popen] = []
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self) -> None:
        _ip("netns", "add", self.bridge_ns)
        _ip("link", "add", "br0", "type", "bridge", ns=self.bridge_ns)
        _ip("link", "set", "br0", "up", ns=self.bridge_ns)
        _ip("link", "set", "lo", "up", ns=self.bridge_ns)
        for i, ns in enumerate(self.names):
            _ip("netns", "add", ns)
            # NOTE: made inside the host's namespace, the pair never touches the root one
            _ip("link", "add", "eth0", "type", "veth", "peer", "name", f"p{i}",
                "netns", self.bridge_ns, ns=ns)
            _ip("link", "set", f"p{i}", "master", "br0", ns=self.bridge_ns)
            _ip("link", "set", f"p{i}", "up", ns=self.bridge_ns)
            _ip("addr", "add", f"{self.addresses[i]}/24", "dev", "eth0", ns=ns)
            _ip("link", "set", "eth0", "up", ns=ns)
            _ip("link", "set", "lo", "up", ns=ns)

    def argv(self, i: int, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.names[i], *argv]

    def run(self, i: int, argv: list[str], **popen) -> subprocess.Popen:
        """Starts `argv` on host i; it is killed at `close` if still running."""
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.STDOUT)
        popen.setdefault("text", True)
        proc = subprocess.Popen(self.argv(i, argv), **popen)
        self._procs.append(proc)
        return proc

    def link_down(self, i: int) -> None:
        """Host i's cable out: its port on the bridge goes down."""
        _ip("link", "set", f"p{i}", "down", ns=self.bridge_ns)

    def drop(self, i: int) -> None:
        """Host i drops every packet it sends to the others (a blackhole route to each: its
        replies and acknowledgements vanish, so its peers' connections stall, not fail).

        NOTE: `tc netem` and tc classifiers need kernel modules this kernel may lack; a route
        needs nothing."""
        for j, addr in enumerate(self.addresses):
            if j != i:
                _ip("route", "add", "blackhole", f"{addr}/32", ns=self.names[i])

    def heal(self, i: int) -> None:
        """Undoes `link_down(i)` and `drop(i)`."""
        _ip("link", "set", f"p{i}", "up", ns=self.bridge_ns)
        for j, addr in enumerate(self.addresses):
            if j != i:
                _ip("route", "del", "blackhole", f"{addr}/32", ns=self.names[i], check=False)

    def close(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for ns in [*self.names, self.bridge_ns]:
            _kill_all_in(ns)
            _ip("netns", "del", ns, check=False)

    def __enter__(self) -> Hosts:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _namespaces() -> list[str]:
    return [line.split()[0] for line in _ip("netns", "list", check=False).stdout.splitlines()
            if line.strip()]


def leftovers() -> list[str]:
    """Namespaces of this process's runs still present (for a test that checks cleanup)."""
    return [ns for ns in _namespaces() if ns.startswith(f"tw{os.getpid()}x")]


def sweep_stale() -> None:
    """Deletes the namespaces (and ends what runs there) of runs whose process is gone: one
    killed before its cleanup ran."""
    for ns in _namespaces():
        m = re.fullmatch(r"tw(\d+)x\d+(?:h\d+|br)", ns)
        if m is None or _alive(int(m.group(1))):
            continue
        _kill_all_in(ns)
        _ip("netns", "del", ns, check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_all_in(ns: str) -> None:
    for pid in _ip("netns", "pids", ns, check=False).stdout.split():
        try:
            os.kill(int(pid), 9)   # NOTE: only what a run of these tests started there
        except (OSError, ValueError):
            pass
