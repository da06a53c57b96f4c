"""CPU kernels of the resize ops and of CropAndResize (ops/image_resize_ops.py).

Every resize method is separable: along each axis it is a matrix W (out x in) of weights,
built here exactly as TF's kernels place their samples (image_resizer_state.h,
resize_bicubic_op.cc, resize_area_op.cc):
  - the scale is in / out, or (in - 1) / (out - 1) with align_corners and out > 1, in float32;
  - the sample of output o is o * scale (legacy) or (o + 0.5) * scale - 0.5 (half_pixel_centers;
    nearest neighbour uses (o + 0.5) * scale);
  - bilinear: floor/ceil neighbours clamped to the image, weight = the fractional part;
  - nearest: floor (roundf with align_corners) clamped to the image;
  - bicubic: Keys' cubic from TF's 1024-entry table, a = -0.75 (legacy) or -0.5
    (half_pixel_centers, where out-of-image taps get weight 0 and the rest renormalize);
  - area: the overlap of [o * scale, (o + 1) * scale) with each input pixel, / scale.
The forward pass is Wy . image . Wx^T (in float64, rounded to float32), applied tap by tap
(each row of W has a few nonzeros); each gradient is the transpose, Wy^T . grads . Wx, which
is what TF's gradient kernels scatter.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

F32 = np.float32
_TABLE = 1024


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def resize_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return F32(in_size - 1) / F32(out_size - 1)
    return F32(in_size) / F32(out_size)


def _samples(out_size: int, scale, half_pixel: bool, shift: bool = True) -> np.ndarray:
    o = np.arange(out_size, dtype=F32)
    if not half_pixel:
        return o * scale
    return (o + F32(0.5)) * scale - F32(0.5) if shift else (o + F32(0.5)) * scale


def bilinear_weights(in_size, out_size, align, half) -> np.ndarray:
    x = _samples(out_size, resize_scale(in_size, out_size, align), half)
    lower = np.maximum(np.floor(x), 0).astype(np.int64)
    upper = np.minimum(np.ceil(x), in_size - 1).astype(np.int64)
    lerp = (x - np.floor(x)).astype(np.float64)
    w = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    np.add.at(w, (rows, lower), 1.0 - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def nearest_indices(in_size, out_size, align, half) -> np.ndarray:
    x = _samples(out_size, resize_scale(in_size, out_size, align), half, shift=False)
    idx = np.floor(x + F32(0.5)) if align else np.floor(x)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half else idx


def nearest_weights(in_size, out_size, align, half) -> np.ndarray:
    w = np.zeros((out_size, in_size))
    w[np.arange(out_size), nearest_indices(in_size, out_size, align, half)] = 1.0
    return w


def _cubic_table(a: float) -> np.ndarray:
    x = np.arange(_TABLE + 1, dtype=np.float64) / _TABLE
    x = x.astype(F32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return np.stack([near, far], 1).astype(F32)


_TABLES = {True: _cubic_table(-0.5), False: _cubic_table(-0.75)}


def bicubic_weights(in_size, out_size, align, half) -> np.ndarray:
    x = _samples(out_size, resize_scale(in_size, out_size, align), half)
    base = np.floor(x).astype(np.int64)
    offset = np.rint((x - np.floor(x)) * F32(_TABLE)).astype(np.int64)
    t = _TABLES[bool(half)]
    taps = np.stack([t[offset, 1], t[offset, 0], t[_TABLE - offset, 0],
                     t[_TABLE - offset, 1]], 1)
    raw = base[:, None] + np.arange(-1, 3)[None, :]
    idx = np.clip(raw, 0, in_size - 1)
    if half:
        taps = np.where(idx == raw, taps, F32(0))
        total = taps.sum(1, dtype=F32)
        ok = np.abs(total) >= 1000.0 * np.finfo(F32).tiny
        taps = np.where(ok[:, None], taps * (F32(1) / np.where(ok, total, 1))[:, None], taps)
    w = np.zeros((out_size, in_size))
    np.add.at(w, (np.repeat(np.arange(out_size), 4), idx.ravel()), taps.ravel().astype(float))
    return w


def area_weights(in_size, out_size, align, half=False) -> np.ndarray:
    scale = resize_scale(in_size, out_size, align)
    w = np.zeros((out_size, in_size))
    for o in range(out_size):
        lo, hi = F32(o) * scale, F32(o + 1) * scale
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            part = min(F32(i + 1), hi) - max(F32(i), lo)
            w[o, min(i, in_size - 1)] += float(part)
    return w / float(scale)


WEIGHTS = {"ResizeBilinear": bilinear_weights, "ResizeBicubic": bicubic_weights,
           "ResizeArea": area_weights, "ResizeNearestNeighbor": nearest_weights}


def _taps(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each [out, k]: the nonzero columns of each row of `w` (padded with
    weight 0), k the most any row has (2 bilinear, 4 bicubic, ~scale + 1 area)."""
    nonzero = w != 0
    k = max(1, int(nonzero.sum(1).max())) if w.size else 1
    order = np.argsort(~nonzero, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(w, order, 1)


def _apply_axis(x: np.ndarray, w: np.ndarray, axis: int) -> np.ndarray:
    idx, weights = _taps(w)
    out = None
    for j in range(idx.shape[1]):
        shape = [1] * x.ndim
        shape[axis] = -1
        term = np.take(x, idx[:, j], axis=axis) * weights[:, j].reshape(shape)
        out = term if out is None else out + term
    return out


def apply_weights(wy: np.ndarray, wx: np.ndarray, images: np.ndarray) -> np.ndarray:
    """Wy . image . Wx^T over the H and W axes of NHWC images, in float64, as a few weighted
    gathers per axis (the matrices are sparse: a handful of taps per row)."""
    return _apply_axis(_apply_axis(images.astype(np.float64), wy, 1), wx, 2)


def _size(images: np.ndarray, size, op: str) -> tuple[int, int]:
    if images.ndim != 4:
        raise _invalid(f"{op}: input must be 4-dimensional, got shape "
                       f"[{','.join(map(str, images.shape))}]")
    size = np.asarray(size)
    if size.shape != (2,):
        raise _invalid(f"{op}: shape_t must be 1-dimensional with 2 elements, got shape "
                       f"[{','.join(map(str, size.shape))}]")
    h, w = int(size[0]), int(size[1])
    if h <= 0 or w <= 0:
        raise _invalid(f"{op}: output dimensions must be positive, got [{h},{w}]")
    if images.shape[1] <= 0 or images.shape[2] <= 0:
        raise _invalid(f"{op}: input image must be of non-zero size")
    return h, w


def _flags(node):
    return bool(node.attr("align_corners")), bool(node.attr("half_pixel_centers") or False)


def _float_resize(op: str):
    def factory(node):
        align, half = _flags(node)
        if half and align:
            raise _invalid(f"{op}: If half_pixel_centers is True, align_corners must be False.")

        def run(images, size):
            images = np.asarray(images)
            h, w = _size(images, size, op)
            wy = WEIGHTS[op](images.shape[1], h, align, half)
            wx = WEIGHTS[op](images.shape[2], w, align, half)
            return np.ascontiguousarray(apply_weights(wy, wx, images).astype(F32))
        return run
    return factory


for _op in ("ResizeBilinear", "ResizeBicubic", "ResizeArea"):
    register_kernel(_op)(_float_resize(_op))


@register_kernel("ResizeNearestNeighbor")
def _resize_nearest(node):
    align, half = _flags(node)

    def run(images, size):
        images = np.asarray(images)
        h, w = _size(images, size, "ResizeNearestNeighbor")
        rows = nearest_indices(images.shape[1], h, align, half)
        cols = nearest_indices(images.shape[2], w, align, half)
        return np.ascontiguousarray(images[:, rows][:, :, cols])
    return run


def _grad_kernel(op: str, weights):
    def factory(node):
        align, half = _flags(node)

        def run(grads, original):
            grads, original = np.asarray(grads), np.asarray(original)
            if grads.ndim != 4 or original.ndim != 4:
                raise _invalid(f"{op}: input_grad and original_image must be 4-dimensional")
            wy = weights(original.shape[1], grads.shape[1], align, half)
            wx = weights(original.shape[2], grads.shape[2], align, half)
            return np.ascontiguousarray(apply_weights(wy.T, wx.T, grads).astype(original.dtype))
        return run
    return factory


register_kernel("ResizeBilinearGrad")(_grad_kernel("ResizeBilinearGrad", bilinear_weights))
register_kernel("ResizeBicubicGrad")(_grad_kernel("ResizeBicubicGrad", bicubic_weights))


@register_kernel("ResizeNearestNeighborGrad")
def _resize_nearest_grad(node):
    align, half = _flags(node)

    def run(grads, size):
        grads = np.asarray(grads)
        h, w = _size(grads, size, "ResizeNearestNeighborGrad")
        rows = nearest_indices(h, grads.shape[1], align, half)
        cols = nearest_indices(w, grads.shape[2], align, half)
        acc = np.float64 if grads.dtype.kind == "f" else np.int64
        out = np.zeros((grads.shape[0], h, w, grads.shape[3]), acc)
        np.add.at(out, (slice(None), rows[:, None], cols[None, :]), grads.astype(acc))
        return out.astype(grads.dtype)
    return run


# -- CropAndResize --------------------------------------------------------------------------
def _crop_axis(lo, hi, crop: int, size: int):
    """Sample positions (float32) of one box along one axis, and the in-image mask."""
    lo, hi = F32(lo), F32(hi)
    if crop > 1:
        step = (hi - lo) * F32(size - 1) / F32(crop - 1)
        pos = lo * F32(size - 1) + np.arange(crop, dtype=F32) * step
    else:
        pos = np.full(crop, F32(0.5) * (lo + hi) * F32(size - 1), F32)
    return pos, (pos >= 0) & (pos <= size - 1)


def _check_boxes(image, boxes, box_ind, op: str):
    image, boxes, box_ind = np.asarray(image), np.asarray(boxes, F32), np.asarray(box_ind)
    if image.ndim != 4:
        raise _invalid(f"{op}: input image must be 4-D")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(f"{op}: boxes must be 2-D with 4 columns, got shape "
                       f"[{','.join(map(str, boxes.shape))}]")
    if box_ind.shape != (boxes.shape[0],):
        raise _invalid(f"{op}: box_index has incompatible shape")
    if box_ind.size and (box_ind.min() < 0 or box_ind.max() >= image.shape[0]):
        raise _invalid(f"{op}: box_index has values outside [0, batch_size)")
    return image, boxes, box_ind


def _lerp_parts(pos, size):
    low = np.clip(np.floor(pos), 0, size - 1).astype(np.int64)
    high = np.clip(np.ceil(pos), 0, size - 1).astype(np.int64)
    return low, high, (pos - np.floor(pos)).astype(F32)


def _round_half_away(x):
    return np.clip(np.floor(np.abs(x) + F32(0.5)) * np.sign(x), -1, None).astype(np.int64)


@register_kernel("CropAndResize")
def _crop_and_resize(node):
    method, extrapolation = node.attr("method"), F32(node.attr("extrapolation_value"))

    def run(image, boxes, box_ind, crop_size):
        image, boxes, box_ind = _check_boxes(image, boxes, box_ind, "CropAndResize")
        ch, cw = (int(v) for v in np.asarray(crop_size))
        if ch <= 0 or cw <= 0:
            raise _invalid("CropAndResize: crop dimensions must be positive")
        _, ih, iw, depth = image.shape
        out = np.empty((boxes.shape[0], ch, cw, depth), F32)
        for b, (y1, x1, y2, x2) in enumerate(boxes):
            img = image[box_ind[b]].astype(F32)
            ys, yok = _crop_axis(y1, y2, ch, ih)
            xs, xok = _crop_axis(x1, x2, cw, iw)
            out[b] = _sample(img, ys, xs, method)
            out[b][~yok] = extrapolation
            out[b][:, ~xok] = extrapolation
        return out
    return run


def _sample(img, ys, xs, method):
    ih, iw = img.shape[:2]
    if method == "nearest":
        r = np.clip(_round_half_away(ys), 0, ih - 1)
        c = np.clip(_round_half_away(xs), 0, iw - 1)
        return img[r][:, c]
    top, bottom, yl = _lerp_parts(ys, ih)
    left, right, xl = _lerp_parts(xs, iw)
    xl = xl[None, :, None]
    t = img[top][:, left] + (img[top][:, right] - img[top][:, left]) * xl
    bt = img[bottom][:, left] + (img[bottom][:, right] - img[bottom][:, left]) * xl
    return t + (bt - t) * yl[:, None, None]


@register_kernel("CropAndResizeGradImage")
def _crop_and_resize_grad_image(node):
    method, out_dtype = node.attr("method"), node.attr("T").np_dtype

    def run(grads, boxes, box_ind, image_size):
        grads = np.asarray(grads, F32)
        n, ih, iw, depth = (int(v) for v in np.asarray(image_size))
        _check_boxes(np.zeros((n, 1, 1, 1)), boxes, box_ind, "CropAndResizeGradImage")
        out = np.zeros((n, ih, iw, depth), np.float64)
        for b, (y1, x1, y2, x2) in enumerate(np.asarray(boxes, F32)):
            ys, yok = _crop_axis(y1, y2, grads.shape[1], ih)
            xs, xok = _crop_axis(x1, x2, grads.shape[2], iw)
            g = grads[b][yok][:, xok].astype(np.float64)
            _scatter(out[int(box_ind[b])], g, ys[yok], xs[xok], method)
        return out.astype(out_dtype)
    return run


def _scatter(dst, g, ys, xs, method):
    ih, iw = dst.shape[:2]
    if method == "nearest":
        r, c = _round_half_away(ys), _round_half_away(xs)
        np.add.at(dst, (r[:, None], c[None, :]), g)
        return
    top, bottom, yl = _lerp_parts(ys, ih)
    left, right, xl = _lerp_parts(xs, iw)
    yl, xl = yl.astype(float)[:, None, None], xl.astype(float)[None, :, None]
    for rows, wy in ((top, 1 - yl), (bottom, yl)):
        for cols, wx in ((left, 1 - xl), (right, xl)):
            np.add.at(dst, (rows[:, None], cols[None, :]), g * wy * wx)


@register_kernel("CropAndResizeGradBoxes")
def _crop_and_resize_grad_boxes(node):
    def run(grads, image, boxes, box_ind):
        image, boxes, box_ind = _check_boxes(image, boxes, box_ind, "CropAndResizeGradBoxes")
        grads = np.asarray(grads, F32)
        out = np.zeros(boxes.shape, np.float64)
        for b in range(boxes.shape[0]):
            out[b] = _box_grad(grads[b], image[box_ind[b]].astype(F32), boxes[b])
        return out.astype(F32)
    return run


def _box_grad(g, img, box):
    """d(sum g * crop) / d(y1, x1, y2, x2) of one bilinear crop (TF: CropAndResizeBackpropBoxes)."""
    ih, iw = img.shape[:2]
    ch, cw = g.shape[:2]
    ys, yok = _crop_axis(box[0], box[2], ch, ih)
    xs, xok = _crop_axis(box[1], box[3], cw, iw)
    top, bottom, yl = _lerp_parts(ys, ih)
    left, right, xl = _lerp_parts(xs, iw)
    tl, tr = img[top][:, left], img[top][:, right]
    bl, br = img[bottom][:, left], img[bottom][:, right]
    yl3, xl3 = yl[:, None, None], xl[None, :, None]
    dy = ((1 - xl3) * (bl - tl) + xl3 * (br - tr)) * g
    dx = ((1 - yl3) * (tr - tl) + yl3 * (br - bl)) * g
    mask = (yok[:, None] & xok[None, :])[..., None]
    dy, dx = np.where(mask, dy, 0).sum((1, 2)), np.where(mask, dx, 0).sum((0, 2))
    hr = (ih - 1) / (ch - 1) if ch > 1 else 0.0
    wr = (iw - 1) / (cw - 1) if cw > 1 else 0.0
    y, x = np.arange(ch), np.arange(cw)
    ky = ((ih - 1 - y * hr), y * hr) if ch > 1 else (0.5 * (ih - 1),) * 2
    kx = ((iw - 1 - x * wr), x * wr) if cw > 1 else (0.5 * (iw - 1),) * 2
    return np.array([(dy * ky[0]).sum(), (dx * kx[0]).sum(), (dy * ky[1]).sum(),
                     (dx * kx[1]).sum()])
