/* Row scatters: params[idx[i], :] += / -= upd[i, :] for i in order, the loop of TF's CPU
 * ScatterFunctor (and of UnsortedSegmentSum into a zeroed output). Duplicate indices add one
 * after another in index order, so the bits are those of TF's sequential loop and of numpy's
 * ufunc.at, in one pass over the touched rows. */
#include "native.h"

/* Whether every index lies in [0, rows); the scatters check before they write anything. */
static int indices_ok(const int64_t *idx, int64_t n, int64_t rows) {
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= rows)
            return 0;
    return 1;
}

#define TW_SCATTER(NAME, T)                                                                  \
    TW_CLONES                                                                                \
    int NAME(T *params, int64_t rows, int64_t cols, const int64_t *idx, int64_t n,           \
             const T *upd, int subtract) {                                                   \
        if (!indices_ok(idx, n, rows))                                                       \
            return -1;                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                    \
            T *p = params + idx[i] * cols;                                                   \
            const T *u = upd + i * cols;                                                     \
            if (subtract) {                                                                  \
                for (int64_t c = 0; c < cols; c++)                                           \
                    p[c] -= u[c];                                                            \
            } else {                                                                         \
                for (int64_t c = 0; c < cols; c++)                                           \
                    p[c] += u[c];                                                            \
            }                                                                                \
        }                                                                                    \
        return 0;                                                                            \
    }

TW_SCATTER(tw_scatter_rows_f32, float)
TW_SCATTER(tw_scatter_rows_f64, double)
