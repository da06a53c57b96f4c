/* Max pooling over NHWC float32 and its gradient, TF's CPU rules: padding never wins (it reads
 * as -inf), nan propagates (numpy's maximum), and the gradient of a window goes to the first
 * element in row-major order equal to its max (the window's last element when none is, e.g.
 * for a nan max). Loops run over channels innermost, so they vectorize. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

TW_INLINE float max_nan(float m, float v) { return (m >= v || m != m) ? m : v; }

TW_CLONES
void tw_max_pool(const float *x, float *y, const tw_window *g) {
    const int64_t C = g->c;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t oh = 0; oh < g->oh; oh++)
            for (int64_t ow = 0; ow < g->ow; ow++) {
                float *out = y + ((n * g->oh + oh) * g->ow + ow) * C;
                for (int64_t c = 0; c < C; c++)
                    out[c] = -INFINITY;
                for (int64_t i = 0; i < g->kh; i++) {
                    int64_t ih = in_row(g, oh, i);
                    if (ih < 0 || ih >= g->h)
                        continue;
                    for (int64_t j = 0; j < g->kw; j++) {
                        int64_t iw = in_col(g, ow, j);
                        if (iw < 0 || iw >= g->w)
                            continue;
                        const float *src = x + ((n * g->h + ih) * g->w + iw) * C;
                        for (int64_t c = 0; c < C; c++)
                            out[c] = max_nan(out[c], src[c]);
                    }
                }
            }
}

/* One output position's windows (all channels): routes dy to the first tap equal to y.
 * `done` (C bytes) marks the channels routed so far. */
TW_INLINE void route_window(const float *x, const float *y, const float *dy, float *dx,
                            unsigned char *done, const tw_window *g, int64_t n, int64_t oh,
                            int64_t ow) {
    const int64_t C = g->c, last = g->kh * g->kw - 1;
    memset(done, 0, (size_t)C);
    for (int64_t t = 0; t <= last; t++) {
        int64_t ih = in_row(g, oh, t / g->kw), iw = in_col(g, ow, t % g->kw);
        int valid = ih >= 0 && ih < g->h && iw >= 0 && iw < g->w;
        if (!valid) {               /* a padding tap: -inf, wins only for a -inf max */
            for (int64_t c = 0; c < C; c++)
                done[c] |= (t == last) | (y[c] == -INFINITY);
            continue;
        }
        const float *src = x + ((n * g->h + ih) * g->w + iw) * C;
        float *dst = dx + ((n * g->h + ih) * g->w + iw) * C;
        if (t == last) {
            for (int64_t c = 0; c < C; c++)
                dst[c] += done[c] ? 0.0f : dy[c];
            break;
        }
        for (int64_t c = 0; c < C; c++) {
            unsigned char hit = (unsigned char)((src[c] == y[c]) & !done[c]);
            dst[c] += hit ? dy[c] : 0.0f;
            done[c] |= hit;
        }
    }
}

/* dx = MaxPoolGrad(x, y, dy); with `relu_of` (the pooled input, a Relu's output) the result is
 * also multiplied by (relu_of > 0), i.e. ReluGrad(MaxPoolGrad(...), relu_of). */
TW_CLONES
int tw_max_pool_grad(const float *x, const float *y, const float *dy, float *dx,
                     const float *relu_of, const tw_window *g) {
    const int64_t C = g->c, image = g->h * g->w * C;
    unsigned char *done = malloc((size_t)(C > 0 ? C : 1));
    if (!done)
        return -1;
    for (int64_t n = 0; n < g->n; n++) {
        memset(dx + n * image, 0, (size_t)image * sizeof(float));
        for (int64_t oh = 0; oh < g->oh; oh++)
            for (int64_t ow = 0; ow < g->ow; ow++) {
                int64_t at = ((n * g->oh + oh) * g->ow + ow) * C;
                route_window(x, y + at, dy + at, dx, done, g, n, oh, ow);
            }
        if (relu_of) {
            float *d = dx + n * image;
            const float *r = relu_of + n * image;
            for (int64_t i = 0; i < image; i++)
                d[i] = d[i] * (r[i] > 0.0f ? 1.0f : 0.0f);
        }
    }
    free(done);
    return 0;
}
