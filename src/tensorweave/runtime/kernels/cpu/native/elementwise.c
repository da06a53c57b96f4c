/* Elementwise float32 kernels, each one pass over memory (numpy needs two to five). */
#include <math.h>

#include "native.h"

/* ReluGrad: g * (x > 0), the product as TF writes it (an inf or nan g where x <= 0 stays nan).
 * NOTE: the mask is a float and the product unconditional; written as a choice, GCC keeps a
 * branch (it may not speculate a trapping multiply), mispredicted on every other element. */
TW_CLONES
void tw_relu_grad(const float *g, const float *x, float *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float mask = (float)(x[i] > 0.0f);
        out[i] = g[i] * mask;
    }
}

/* numpy's maximum/minimum against a constant: nan propagates, ties keep the left value. */
static inline float max0(float v) { return (v >= 0.0f || v != v) ? v : 0.0f; }
static inline float min6(float v) { return (v <= 6.0f || v != v) ? v : 6.0f; }

/* y[r, :] += bias (when given), then the activation, in place over rows x cols. */
TW_CLONES
void tw_bias_act(float *y, const float *bias, int64_t rows, int64_t cols, int act) {
    for (int64_t r = 0; r < rows; r++) {
        float *row = y + r * cols;
        if (bias) {
            for (int64_t c = 0; c < cols; c++)
                row[c] += bias[c];
        }
        if (act == TW_ACT_RELU) {
            for (int64_t c = 0; c < cols; c++)
                row[c] = max0(row[c]);
        } else if (act == TW_ACT_RELU6) {
            for (int64_t c = 0; c < cols; c++)
                row[c] = min6(max0(row[c]));
        }
    }
}

/* ApplyAdam in one pass, rounding after every operation exactly as the numpy kernel does:
 *   m += (g - m)(1 - beta1);  v += (g*g - v)(1 - beta2);
 *   var -= alpha * m / (sqrt(v) + eps)       (Nesterov: alpha*(g(1-beta1) + beta1*m)). */
TW_CLONES
void tw_adam(float *var, float *m, float *v, const float *g, int64_t n, float alpha,
             float one_minus_beta1, float one_minus_beta2, float beta1, float epsilon,
             int nesterov) {
    for (int64_t i = 0; i < n; i++) {
        float gi = g[i];
        float mi = m[i] + (gi - m[i]) * one_minus_beta1;
        float vi = v[i] + (gi * gi - v[i]) * one_minus_beta2;
        float step = nesterov ? (gi * one_minus_beta1 + mi * beta1) * alpha : mi * alpha;
        m[i] = mi;
        v[i] = vi;
        var[i] -= step / (sqrtf(vi) + epsilon);
    }
}
