/* tensorweave's compiled CPU helpers: float32 loops that numpy would run as several passes
 * over memory. Every function here works on C-contiguous float32 buffers (the scatters also
 * float64, with int64 indices) whose sizes the module (module.c) has checked against the
 * dimensions; none of them touches Python objects,
 * so they run with the GIL released. Those that need scratch memory return -1 when they
 * cannot get it (and 0 otherwise).
 */
#ifndef TW_NATIVE_H
#define TW_NATIVE_H

#include <stddef.h>
#include <stdint.h>

/* Clones of the hot loops for wider vector units, picked at load time (GCC's ifuncs; other
 * compilers build the baseline only).
 * NOTE: everything is compiled with -ffp-contract=off, so a clone computes the same bits as
 * the baseline and as numpy (no fused multiply-adds appear on some machines only). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && defined(__linux__)
#define TW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TW_CLONES
#endif

/* Helpers of a cloned loop must be inlined into it, or they run the baseline code. */
#define TW_INLINE static inline __attribute__((always_inline))

/* The geometry of a 2-D window over NHWC data (TF's Window2D): input n,h,w,c; window kh,kw;
 * output oh,ow; strides, dilations; padding before (top/left). */
typedef struct {
    int64_t n, h, w, c;
    int64_t kh, kw, oh, ow;
    int64_t sh, sw, dh, dw;
    int64_t pt, pl;
} tw_window;

/* The input row / column that output o's window tap i / j reads (may fall in the padding). */
TW_INLINE int64_t in_row(const tw_window *g, int64_t o, int64_t i) {
    return o * g->sh - g->pt + i * g->dh;
}

TW_INLINE int64_t in_col(const tw_window *g, int64_t o, int64_t j) {
    return o * g->sw - g->pl + j * g->dw;
}

enum { TW_ACT_NONE = 0, TW_ACT_RELU = 1, TW_ACT_RELU6 = 2 };

/* elementwise.c */
void tw_relu_grad(const float *g, const float *x, float *out, int64_t n);
void tw_bias_act(float *y, const float *bias, int64_t rows, int64_t cols, int act);
void tw_adam(float *var, float *m, float *v, const float *g, int64_t n, float alpha,
             float one_minus_beta1, float one_minus_beta2, float beta1, float epsilon,
             int nesterov);

/* norm.c */
void tw_channel_sums(const float *a, const float *b, const float *shift, int64_t rows,
                     int64_t cols, double *s1, double *s2);
void tw_bn_forward(const float *x, float *y, int64_t rows, int64_t cols, const float *mean,
                   const float *k, const float *offset);
void tw_bn_backward(const float *dy, const float *x, float *dx, int64_t rows, int64_t cols,
                    const float *mean, const float *inv, const float *a, const float *b,
                    const float *c);

/* pool.c */
void tw_max_pool(const float *x, float *y, const tw_window *win);
int tw_max_pool_grad(const float *x, const float *y, const float *dy, float *dx,
                     const float *relu_of, const tw_window *win);

/* scatter.c: -1 (and nothing written) when an index is outside [0, rows) */
int tw_scatter_rows_f32(float *params, int64_t rows, int64_t cols, const int64_t *idx,
                        int64_t n, const float *upd, int subtract);
int tw_scatter_rows_f64(double *params, int64_t rows, int64_t cols, const int64_t *idx,
                        int64_t n, const double *upd, int subtract);

/* softmax.c: -1 (and nothing written) when a label is outside [0, cols) */
int tw_sparse_xent(const float *logits, const int64_t *labels, int64_t rows, int64_t cols,
                   float *loss, float *backprop);

/* conv.c */
void tw_im2col(const float *x, float *cols, const tw_window *win);
void tw_col2im(const float *cols, float *dx, const tw_window *win);
int tw_conv_direct(const float *x, const float *w, const float *bias, float *y, int64_t o,
                   int act, const tw_window *win);
int tw_conv_filter_direct(const float *x, const float *dy, float *dw, int64_t o,
                          const tw_window *win);

#endif
