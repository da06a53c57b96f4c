/* NHWC float32 convolution helpers: the patch matrix and its adjoint (the GEMM between them
 * stays with BLAS), and a direct convolution for inputs with few channels, where a patch
 * matrix would be long and thin (K = kh*kw*c of 9 for a grayscale image) and BLAS slow. */
#include <stdlib.h>
#include <string.h>

#include "native.h"

/* cols[(n, oh, ow), (i, j, c)] = x[n, ih, iw, c], 0 where the tap falls in the padding. */
void tw_im2col(const float *x, float *cols, const tw_window *g) {
    const int64_t C = g->c;
    const size_t run = (size_t)C * sizeof(float);
    float *dst = cols;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t oh = 0; oh < g->oh; oh++)
            for (int64_t ow = 0; ow < g->ow; ow++)
                for (int64_t i = 0; i < g->kh; i++) {
                    int64_t ih = in_row(g, oh, i);
                    for (int64_t j = 0; j < g->kw; j++, dst += C) {
                        int64_t iw = in_col(g, ow, j);
                        if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
                            memset(dst, 0, run);
                        else
                            memcpy(dst, x + ((n * g->h + ih) * g->w + iw) * C, run);
                    }
                }
}

/* dx = the adjoint of im2col: every patch row added back where it was read from. */
TW_CLONES
void tw_col2im(const float *cols, float *dx, const tw_window *g) {
    const int64_t C = g->c;
    memset(dx, 0, (size_t)(g->n * g->h * g->w * C) * sizeof(float));
    const float *src = cols;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t oh = 0; oh < g->oh; oh++)
            for (int64_t ow = 0; ow < g->ow; ow++)
                for (int64_t i = 0; i < g->kh; i++) {
                    int64_t ih = in_row(g, oh, i);
                    for (int64_t j = 0; j < g->kw; j++, src += C) {
                        int64_t iw = in_col(g, ow, j);
                        if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
                            continue;
                        float *d = dx + ((n * g->h + ih) * g->w + iw) * C;
                        for (int64_t c = 0; c < C; c++)
                            d[c] += src[c];
                    }
                }
}

TW_INLINE float act_of(float v, int act) {
    if (act == TW_ACT_NONE)
        return v;
    v = (v >= 0.0f || v != v) ? v : 0.0f;
    if (act == TW_ACT_RELU6)
        v = (v <= 6.0f || v != v) ? v : 6.0f;
    return v;
}

/* x with its padding made real (zeros), extended to cover every window: the direct loops
 * then read every tap without a bounds check. Sets hp, wp; NULL when out of memory (or when
 * the size would not fit in memory at all). */
static float *padded_copy(const float *x, const tw_window *g, int64_t *hp, int64_t *wp) {
    const int64_t C = g->c;
    *hp = g->oh > 0 ? (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1 : 0;
    *wp = g->ow > 0 ? (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1 : 0;
    int64_t count;                        /* n * hp * wp * c, refused when it overflows */
    if (__builtin_mul_overflow(g->n, *hp, &count) || __builtin_mul_overflow(count, *wp, &count)
        || __builtin_mul_overflow(count, C, &count) || count > ((int64_t)1 << 40))
        return NULL;
    float *xp = calloc((size_t)count + 1, sizeof(float));
    if (!xp)
        return NULL;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t r = 0; r < *hp; r++) {
            int64_t ih = r - g->pt;
            if (ih < 0 || ih >= g->h)
                continue;
            int64_t lo = g->pl, hi = g->pl + g->w;      /* padded columns holding input */
            if (hi > *wp)
                hi = *wp;
            if (hi > lo)
                memcpy(xp + ((n * *hp + r) * *wp + lo) * C, x + ((n * g->h + ih) * g->w) * C,
                       (size_t)((hi - lo) * C) * sizeof(float));
        }
    return xp;
}

/* Pixels and output channels go in register blocks of TW_PIX x TW_BLOCK; the compiler sees
 * constant widths except in a last, narrower block. */
#define TW_PIX 4
#define TW_BLOCK 32

/* Pixels ow0 .. ow0+pix of row (n, oh), channels [o0, o0+width): act(sum over taps + bias). */
TW_INLINE void conv_block(const float *xp, int64_t hp, int64_t wp, const float *w,
                          const float *bias, float *y, int64_t o, int64_t o0, int64_t width,
                          int64_t pix, int act, const tw_window *g, int64_t n, int64_t oh,
                          int64_t ow0) {
    const int64_t C = g->c, step = g->sw * C;
    float acc[TW_PIX][TW_BLOCK];
    for (int64_t p = 0; p < pix; p++)
        for (int64_t k = 0; k < width; k++)
            acc[p][k] = 0.0f;
    for (int64_t i = 0; i < g->kh; i++)
        for (int64_t j = 0; j < g->kw; j++) {
            const float *xr = xp + ((n * hp + oh * g->sh + i * g->dh) * wp +
                                    ow0 * g->sw + j * g->dw) * C;
            const float *wt = w + (i * g->kw + j) * C * o + o0;
            for (int64_t c = 0; c < C; c++)
                for (int64_t p = 0; p < pix; p++) {
                    float xv = xr[p * step + c];
                    for (int64_t k = 0; k < width; k++)
                        acc[p][k] += xv * wt[c * o + k];
                }
        }
    for (int64_t p = 0; p < pix; p++) {
        float *out = y + ((n * g->oh + oh) * g->ow + ow0 + p) * o + o0;
        for (int64_t k = 0; k < width; k++)
            out[k] = act_of(bias ? acc[p][k] + bias[o0 + k] : acc[p][k], act);
    }
}

/* y = act(conv(x, w) + bias): x NHWC, w (kh, kw, c, o), y (n, oh, ow, o); bias may be NULL.
 * Sums run over taps in (i, j, c) order, then the bias is added, as im2col + GEMM + BiasAdd
 * would (up to the GEMM's own summation order). Returns -1 when out of memory. */
TW_CLONES
int tw_conv_direct(const float *x, const float *w, const float *bias, float *y, int64_t o,
                   int act, const tw_window *g) {
    int64_t hp, wp;
    float *xp = padded_copy(x, g, &hp, &wp);
    if (!xp)
        return -1;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t oh = 0; oh < g->oh; oh++)
            for (int64_t ow = 0; ow < g->ow; ow += TW_PIX) {
                int64_t pix = g->ow - ow < TW_PIX ? g->ow - ow : TW_PIX;
                int64_t o0 = 0;
                for (; o0 + TW_BLOCK <= o; o0 += TW_BLOCK) {
                    if (pix == TW_PIX)
                        conv_block(xp, hp, wp, w, bias, y, o, o0, TW_BLOCK, TW_PIX, act, g, n,
                                   oh, ow);
                    else
                        conv_block(xp, hp, wp, w, bias, y, o, o0, TW_BLOCK, pix, act, g, n,
                                   oh, ow);
                }
                if (o0 < o)
                    conv_block(xp, hp, wp, w, bias, y, o, o0, o - o0, pix, act, g, n, oh, ow);
            }
    free(xp);
    return 0;
}

/* acc[0, width) = sum over the pixels of image n of x[pixel's tap (i, j), c] * dy[pixel,
 * o0 + k], in float (one image: a few hundred to a few thousand terms). */
TW_INLINE void filter_tap(const float *xp, int64_t hp, int64_t wp, const float *dy,
                          float *restrict acc, int64_t o, int64_t o0, int64_t width,
                          const tw_window *g, int64_t n, int64_t i, int64_t j, int64_t c) {
    const int64_t C = g->c;
    float a[2][TW_BLOCK];              /* even and odd pixels: two chains of additions */
    for (int64_t k = 0; k < width; k++)
        a[0][k] = a[1][k] = 0.0f;
    for (int64_t oh = 0; oh < g->oh; oh++) {
        const float *xr = xp + ((n * hp + oh * g->sh + i * g->dh) * wp + j * g->dw) * C + c;
        const float *d = dy + (n * g->oh + oh) * g->ow * o + o0;
        int64_t ow = 0;
        for (; ow + 1 < g->ow; ow += 2) {
            float x0 = xr[ow * g->sw * C], x1 = xr[(ow + 1) * g->sw * C];
            for (int64_t k = 0; k < width; k++) {
                a[0][k] += x0 * d[ow * o + k];
                a[1][k] += x1 * d[(ow + 1) * o + k];
            }
        }
        if (ow < g->ow) {
            float x0 = xr[ow * g->sw * C];
            for (int64_t k = 0; k < width; k++)
                a[0][k] += x0 * d[ow * o + k];
        }
    }
    for (int64_t k = 0; k < width; k++)
        acc[k] = a[0][k] + a[1][k];
}

/* dw[i, j, c, :] = sum over output pixels of x[pixel's tap (i, j), c] * dy[pixel, :]: summed
 * in float within an image and in double across images. Returns -1 when out of memory. */
TW_CLONES
int tw_conv_filter_direct(const float *x, const float *dy, float *dw, int64_t o,
                          const tw_window *g) {
    const int64_t size = g->kh * g->kw * g->c * o;
    int64_t hp, wp;
    float *xp = padded_copy(x, g, &hp, &wp);
    float *part = malloc((size_t)(size > 0 ? size : 1) * sizeof(float));
    double *total = calloc((size_t)(size > 0 ? size : 1), sizeof(double));
    if (!xp || !part || !total) {
        free(xp);
        free(part);
        free(total);
        return -1;
    }
    for (int64_t n = 0; n < g->n; n++) {
        for (int64_t i = 0; i < g->kh; i++)
            for (int64_t j = 0; j < g->kw; j++)
                for (int64_t c = 0; c < g->c; c++) {
                    float *at = part + ((i * g->kw + j) * g->c + c) * o;
                    int64_t o0 = 0;
                    for (; o0 + TW_BLOCK <= o; o0 += TW_BLOCK)
                        filter_tap(xp, hp, wp, dy, at + o0, o, o0, TW_BLOCK, g, n, i, j, c);
                    if (o0 < o)
                        filter_tap(xp, hp, wp, dy, at + o0, o, o0, o - o0, g, n, i, j, c);
                }
        for (int64_t k = 0; k < size; k++)
            total[k] += part[k];
    }
    for (int64_t k = 0; k < size; k++)
        dw[k] = (float)total[k];
    free(xp);
    free(part);
    free(total);
    return 0;
}
