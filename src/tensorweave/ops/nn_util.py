"""Helpers shared by the nn op modules: TF's argument normalisation (`_get_sequence`,
`convert_padding`)."""

from __future__ import annotations


def get_sequence(value, n: int, channel_index: int, name: str) -> list[int]:
    """TF's `_get_sequence`: an int or a list of 1, n or n+2 ints → the n+2 list of the op.

    Raises:
      ValueError: a list of another length.
    """
    if value is None:
        return [1] * (n + 2)
    value = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(value) == n + 2:
        return [int(v) for v in value]
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: "
                         f"{name}={value} of length {len(value)}")
    value = [int(v) for v in value]
    return [1, 1] + value if channel_index == 1 else [1] + value + [1]


def convert_padding(padding, expected_length: int = 4) -> tuple[str, list[int]]:
    """TF's `convert_padding`: "SAME"/"VALID", or a list of [before, after] pairs → EXPLICIT.

    Raises:
      ValueError: "EXPLICIT" given as a string, or a malformed list.
    """
    if isinstance(padding, (list, tuple)):
        explicit: list[int] = []
        for i, pair in enumerate(padding):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"When `padding` is a list, each element of `padding` must be "
                                 f"a list/tuple of size 2. Received: padding={padding} with "
                                 f"element at index {i} of size "
                                 f"{len(pair) if isinstance(pair, (list, tuple)) else 1}")
            explicit.extend(int(p) for p in pair)
        if len(padding) != expected_length:
            raise ValueError(f"When padding is a list, it must be of size {expected_length}. "
                             f"Received: padding={padding} of size {len(padding)}")
        return "EXPLICIT", explicit
    if isinstance(padding, bytes):
        padding = padding.decode()
    if padding == "EXPLICIT":
        raise ValueError('"EXPLICIT" is not a valid value for `padding`. To use explicit '
                         'padding, `padding` must be a list.')
    return padding, []


def channel_index(data_format: str | None) -> int:
    return 1 if (data_format or "NHWC").startswith("NC") else 3
