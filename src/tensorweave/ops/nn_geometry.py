"""Window geometry shared by the conv/pool shape functions and their kernels (pure Python).

Everything here follows TensorFlow's `GetWindowedOutputSizeVerbose` and `CheckValidPadding`,
so static shapes and kernel outputs agree with TF, including the odd padding split of SAME
(the extra row or column goes after).
"""

from __future__ import annotations

from dataclasses import dataclass


class GeometryError(ValueError):
    """An impossible window configuration; shape fns re-raise it via `ctx.fail`."""


def spatial_axes(data_format: str) -> tuple[int, int, int]:
    """(height, width, channel) axes of a 4-D tensor in `data_format`."""
    return (2, 3, 1) if data_format.startswith("NC") else (1, 2, 3)


def trunc_div(a: int, b: int) -> int:
    """C++ integer division (rounds toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def windowed_output_size(in_size: int, k: int, stride: int, dilation: int, padding: str,
                         pads: tuple[int, int] = (0, 0)) -> tuple[int, int, int]:
    """(output size, pad before, pad after) of one spatial dimension.

    Raises:
      GeometryError: non-positive stride/dilation, or a window larger than the padded input.
    """
    if stride <= 0:
        raise GeometryError(f"Stride must be > 0, but got {stride}")
    if dilation < 1:
        raise GeometryError(f"Dilation rate must be >= 1, but got {dilation}")
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = trunc_div(in_size + stride - 1, stride)
        needed = max(0, (out - 1) * stride + eff - in_size)
        return out, needed // 2, needed - needed // 2
    before, after = pads if padding == "EXPLICIT" else (0, 0)
    padded = in_size + before + after
    if padded < eff:
        raise GeometryError(f"Negative dimension size caused by subtracting {eff} from {padded}")
    return trunc_div(padded - eff + stride, stride), before, after


def check_explicit_padding(padding: str, explicit: list, data_format: str) -> None:
    """TF's CheckValidPadding for 4-D tensors. Raises GeometryError."""
    if padding != "EXPLICIT":
        if explicit:
            raise GeometryError("explicit_paddings attribute must be empty if the padding "
                                "attribute is not EXPLICIT")
        return
    if len(explicit) != 8:
        raise GeometryError(f"explicit_paddings attribute must contain 8 values, but got: "
                            f"{len(explicit)}")
    if any(p < 0 for p in explicit):
        raise GeometryError("All elements of explicit_paddings must be nonnegative")
    _, _, c = spatial_axes(data_format)
    if explicit[0] or explicit[1] or explicit[2 * c] or explicit[2 * c + 1]:
        raise GeometryError("Nonzero explicit padding in the batch or depth dimensions is not "
                            "supported")


def check_list_attr(op: str, name: str, values: list, what: str | None = None) -> None:
    """A 4-entry list attr (strides, dilations, ksize). Raises GeometryError."""
    if len(values) != 4:
        raise GeometryError(f"{op} requires the {what or name} attribute to contain 4 values, "
                            f"but got: {len(values)}")


@dataclass(frozen=True)
class Window2D:
    """The resolved geometry of one 2-D conv/pool over NHWC spatial dims."""

    in_h: int
    in_w: int
    k_h: int
    k_w: int
    out_h: int
    out_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_top: int
    pad_bottom: int
    pad_left: int
    pad_right: int

    @property
    def padded(self) -> bool:
        return bool(self.pad_top or self.pad_bottom or self.pad_left or self.pad_right)


def window_2d(in_hw: tuple[int, int], k_hw: tuple[int, int], attrs: dict) -> Window2D:
    """Resolves a 2-D window from an op's attrs (strides, padding, [dilations],
    [explicit_paddings], data_format). Raises GeometryError."""
    fmt = attrs.get("data_format", "NHWC")
    h, w, _ = spatial_axes(fmt)
    strides = attrs["strides"]
    dil = attrs.get("dilations") or [1, 1, 1, 1]
    padding = attrs["padding"]
    explicit = attrs.get("explicit_paddings") or []
    pads_h = (explicit[2 * h], explicit[2 * h + 1]) if explicit else (0, 0)
    pads_w = (explicit[2 * w], explicit[2 * w + 1]) if explicit else (0, 0)
    oh, pt, pb = windowed_output_size(in_hw[0], k_hw[0], strides[h], dil[h], padding, pads_h)
    ow, pl, pr = windowed_output_size(in_hw[1], k_hw[1], strides[w], dil[w], padding, pads_w)
    return Window2D(in_hw[0], in_hw[1], k_hw[0], k_hw[1], oh, ow, strides[h], strides[w],
                    dil[h], dil[w], pt, pb, pl, pr)
