/* Softmax cross entropy with sparse labels, one row at a time: a row (a vocabulary of
 * 10,000 classes is 40 KB) stays in cache across its three passes (max; exp and sum;
 * scale), where numpy makes eight passes over the whole batch. */
#include <math.h>

#include "native.h"

#define LANES 8

/* exp(x) in float32, branch-free so that it vectorizes: x = n ln2 + r with |r| <= ln2 / 2,
 * exp(r) by Cephes's degree-6 polynomial (relative error ~2e-7, TF's Eigen exp is alike),
 * times 2^n built from its bits. Results below FLT_MIN flush to 0; nan stays nan. */
TW_INLINE float tw_expf(float x) {
    const float hi = 88.3762626647949f, lo = -87.3365478515625f;
    float c = x > hi ? hi : (x < lo ? lo : x);
    /* NOTE: adding 1.5 * 2^23 rounds to an integer (no fast-math reassociates it away). */
    float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = (p * (r * r) + r) + 1.0f;
    union { int32_t i; float f; } scale = {.i = ((int32_t)n + 127) << 23};
    float e = y * scale.f;
    e = x < lo ? 0.0f : e;
    return x > 88.72283935546875f ? INFINITY : e;
}

TW_INLINE float row_max(const float *x, int64_t cols) {
    float lane[LANES];
    for (int k = 0; k < LANES; k++)
        lane[k] = -INFINITY;
    int64_t j = 0;
    for (; j + LANES <= cols; j += LANES)
        for (int k = 0; k < LANES; k++)
            lane[k] = x[j + k] > lane[k] ? x[j + k] : lane[k];
    float m = -INFINITY;
    for (int k = 0; k < LANES; k++)
        m = lane[k] > m ? lane[k] : m;
    for (; j < cols; j++)
        m = x[j] > m ? x[j] : m;
    return m;
}

/* e[j] = exp(x[j] - m); returns the sum of e, accumulated in double (in lanes, so that
 * both loops vectorize; the row is in cache for the second). */
TW_INLINE double exp_row(const float *restrict x, float m, float *restrict e, int64_t cols) {
    for (int64_t j = 0; j < cols; j++)
        e[j] = tw_expf(x[j] - m);
    double lane[LANES] = {0};
    int64_t j = 0;
    for (; j + LANES <= cols; j += LANES)
        for (int k = 0; k < LANES; k++)
            lane[k] += e[j + k];
    double s = 0.0;
    for (int k = 0; k < LANES; k++)
        s += lane[k];
    for (; j < cols; j++)
        s += e[j];
    return s;
}

TW_CLONES
int tw_sparse_xent(const float *logits, const int64_t *labels, int64_t rows, int64_t cols,
                   float *loss, float *backprop) {
    for (int64_t r = 0; r < rows; r++)
        if (labels[r] < 0 || labels[r] >= cols)
            return -1;
    for (int64_t r = 0; r < rows; r++) {
        const float *x = logits + r * cols;
        float *g = backprop + r * cols;
        float m = row_max(x, cols);
        double sum = exp_row(x, m, g, cols);
        loss[r] = (float)(log(sum) - (double)(x[labels[r]] - m));
        float inv = (float)(1.0 / sum);
        for (int64_t j = 0; j < cols; j++)
            g[j] *= inv;
        g[labels[r]] -= 1.0f;
    }
    return 0;
}
