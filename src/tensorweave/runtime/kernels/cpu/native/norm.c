/* Batch normalization over rows x channels (NHWC data flattened), each loop one pass. */
#include "native.h"

/* Per-channel sums, accumulated in double: s1[c] += a[r,c]; s2[c] += a[r,c] * (b[r,c] - shift[c]).
 * With b = a and shift = 0 they are the sum and the sum of squares of a (the forward pass's
 * statistics); with a = dy, b = x and shift = mean they are the gradient's two sums. */
TW_CLONES
void tw_channel_sums(const float *a, const float *b, const float *shift, int64_t rows,
                     int64_t cols, double *s1, double *s2) {
    for (int64_t r = 0; r < rows; r++) {
        const float *ar = a + r * cols, *br = b + r * cols;
        for (int64_t c = 0; c < cols; c++) {
            double av = ar[c];
            s1[c] += av;
            s2[c] += av * ((double)br[c] - (double)shift[c]);
        }
    }
}

/* y = (x - mean) * k + offset per channel, rounding as the numpy kernel does. */
TW_CLONES
void tw_bn_forward(const float *x, float *y, int64_t rows, int64_t cols, const float *mean,
                   const float *k, const float *offset) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        for (int64_t c = 0; c < cols; c++)
            yr[c] = (xr[c] - mean[c]) * k[c] + offset[c];
    }
}

/* The training gradient dx = a * ((dy - b) - ((x - mean) * inv) * c) per channel, with
 * a = scale * inv, b = sum(dy) / n, c = sum(dy * x_hat) / n (the numpy kernel's order). */
TW_CLONES
void tw_bn_backward(const float *dy, const float *x, float *dx, int64_t rows, int64_t cols,
                    const float *mean, const float *inv, const float *a, const float *b,
                    const float *c) {
    for (int64_t r = 0; r < rows; r++) {
        const float *dyr = dy + r * cols, *xr = x + r * cols;
        float *dxr = dx + r * cols;
        for (int64_t j = 0; j < cols; j++)
            dxr[j] = a[j] * ((dyr[j] - b[j]) - ((xr[j] - mean[j]) * inv[j]) * c[j]);
    }
}
