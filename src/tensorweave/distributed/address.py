"""`host:port` addresses as gRPC writes them: an IPv6 host in brackets (`[::1]:2222`).

The one place addresses are joined and split: a host is kept bare (`::1`, what sockets
take) and bracketed only inside an address (what gRPC targets and cluster specs hold).
"""

from __future__ import annotations


def bare_host(host: str) -> str:
    """`host` without IPv6 brackets: `[::1]` -> `::1`."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def join(host: str, port) -> str:
    """`host:port`, with an IPv6 host bracketed: ("::1", 80) -> "[::1]:80" (a host that
    already has brackets keeps them once)."""
    host = bare_host(host)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def split(address: str) -> tuple[str, int]:
    """(bare host, port) of `host:port`, `[v6]:port` or `grpc://...`.

    Raises:
      ValueError: no port, a port that is not a number in 0..65535, or an IPv6 host without
        brackets (`::1:80` is ambiguous).
    """
    text = address.removeprefix("grpc://")
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
        if not sep or "]" in host:
            raise ValueError(f"Bad address {address!r}: expected '[host]:port'")
    else:
        host, sep, port = text.rpartition(":")
        if not sep:
            raise ValueError(f"Bad address {address!r}: expected 'host:port'")
        if ":" in host:
            raise ValueError(f"Bad address {address!r}: an IPv6 host takes brackets, as in "
                             f"'[{host}]:{port}'")
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"Bad port in address {address!r}")
    return host, int(port)


__all__ = ["bare_host", "join", "split"]
