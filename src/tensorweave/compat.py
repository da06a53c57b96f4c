"""`tf.compat`: `v1` (tensorweave's namespace is TF1's, so `v1` is tensorweave itself) and
TF's bytes/text helpers (`as_bytes`, `as_text`, `as_str`, `path_to_str`).

The package root sets `v1` when it imports this module (so this module need not import the
root, which would make the two import each other).
"""

import os

v1 = None  # set to the tensorweave module by tensorweave/__init__.py


def as_bytes(bytes_or_text, encoding="utf-8") -> bytes:
    """`bytes_or_text` as bytes (text is encoded). Raises TypeError for anything else."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8") -> str:
    """`bytes_or_text` as str (bytes are decoded). Raises TypeError for anything else."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text
as_str_any = str


def path_to_str(path):
    """An os.PathLike as its string form; anything else unchanged."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path
