/* tensorweave.runtime.kernels.cpu._native: the Python face of the compiled helpers.
 *
 * Each function takes numpy arrays (any object exporting a C-contiguous float32 buffer;
 * scatter_rows also float64 values; int64 indices and labels),
 * checks every buffer's length against the dimensions it is given (so no call can read or
 * write outside a buffer, whatever a graph from the network says), releases the GIL and runs
 * one loop of native.h. Outputs are written into arrays the caller allocated. Errors:
 * TypeError for a buffer that is not float32, BufferError for a non-contiguous one,
 * ValueError for sizes that do not match, MemoryError when scratch memory is short.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "native.h"

#define MAX_BUFS 6

typedef struct {
    Py_buffer views[MAX_BUFS];
    int count;
} bufs;

static void release(bufs *b) {
    for (int i = 0; i < b->count; i++)
        PyBuffer_Release(&b->views[i]);
    b->count = 0;
}

/* Whether v holds native numbers of format `code` ("f": float32, "d": float64, "q": int64,
 * which numpy spells "l" on LP64 machines). */
static int is_format(const Py_buffer *v, const char *code) {
    const char *f = v->format ? v->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@')
        f++;
    if (code[0] == 'q')
        return v->itemsize == 8 && (strcmp(f, "q") == 0 || strcmp(f, "l") == 0);
    return v->itemsize == (code[0] == 'd' ? 8 : 4) && strcmp(f, code) == 0;
}

static const char *format_name(const char *code) {
    return code[0] == 'd' ? "float64" : code[0] == 'q' ? "int64" : "float32";
}

/* Borrows obj's buffer (writable if asked) of exactly `count` numbers of format `code`;
 * NULL for None when `optional`. Returns 0, or -1 with an exception set. */
static int take_as(bufs *b, PyObject *obj, int64_t count, int writable, int optional,
                   const char *name, void **out, const char *code) {
    *out = NULL;
    if (obj == Py_None && optional)
        return 0;
    Py_buffer *v = &b->views[b->count];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, v, flags) < 0)
        return -1;
    b->count++;
    if (!is_format(v, code)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a %s buffer", name, format_name(code));
        return -1;
    }
    if (count < 0 || v->len != (Py_ssize_t)count * v->itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %lld numbers, got %lld", name,
                     (long long)count, (long long)(v->len / v->itemsize));
        return -1;
    }
    *out = v->buf;
    return 0;
}

/* take_as for float32 buffers, the common case. */
static int take(bufs *b, PyObject *obj, int64_t count, int writable, int optional,
                const char *name, void **out) {
    return take_as(b, obj, count, writable, optional, name, out, "f");
}

/* a * b * ..., or -1 on overflow or a negative factor. */
static int64_t product(int k, const int64_t *f) {
    int64_t p = 1;
    for (int i = 0; i < k; i++) {
        if (f[i] < 0 || __builtin_mul_overflow(p, f[i], &p))
            return -1;
    }
    return p;
}

static int parse_window(PyObject *t, tw_window *g) {
    if (!PyArg_ParseTuple(t, "LLLLLLLLLLLLLL;window: 14 ints (n, h, w, c, kh, kw, oh, ow, "
                          "sh, sw, dh, dw, pt, pl)", &g->n, &g->h, &g->w, &g->c, &g->kh,
                          &g->kw, &g->oh, &g->ow, &g->sh, &g->sw, &g->dh, &g->dw, &g->pt,
                          &g->pl))
        return -1;
    int64_t dims[] = {g->n, g->h, g->w, g->c, g->kh, g->kw, g->oh, g->ow, g->pt, g->pl};
    for (int i = 0; i < 10; i++)
        if (dims[i] < 0 || dims[i] > (1LL << 40)) {
            PyErr_SetString(PyExc_ValueError, "window: size out of range");
            return -1;
        }
    int64_t steps[] = {g->sh, g->sw, g->dh, g->dw};
    for (int i = 0; i < 4; i++)
        if (steps[i] < 1 || steps[i] > (1LL << 20)) {
            PyErr_SetString(PyExc_ValueError, "window: strides and dilations out of range");
            return -1;
        }
    return 0;
}

static int64_t input_size(const tw_window *g) {
    int64_t f[] = {g->n, g->h, g->w, g->c};
    return product(4, f);
}

static int64_t output_size(const tw_window *g, int64_t channels) {
    int64_t f[] = {g->n, g->oh, g->ow, channels};
    return product(4, f);
}

static PyObject *done(bufs *b, int status) {
    release(b);
    if (status < 0)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *fail(bufs *b) {
    release(b);
    return NULL;
}

static PyObject *py_relu_grad(PyObject *self, PyObject *args) {
    PyObject *og, *ox, *oo;
    Py_ssize_t n;
    void *g, *x, *o;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOn", &og, &ox, &oo, &n))
        return NULL;
    if (take(&b, og, n, 0, 0, "relu_grad g", &g) || take(&b, ox, n, 0, 0, "relu_grad x", &x) ||
        take(&b, oo, n, 1, 0, "relu_grad out", &o))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    tw_relu_grad(g, x, o, n);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_bias_act(PyObject *self, PyObject *args) {
    PyObject *oy, *ob;
    long long rows, cols;
    int act;
    void *y, *bias;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOLLi", &oy, &ob, &rows, &cols, &act))
        return NULL;
    int64_t f[] = {rows, cols};
    if (act < TW_ACT_NONE || act > TW_ACT_RELU6) {
        PyErr_SetString(PyExc_ValueError, "bias_act: unknown activation");
        return NULL;
    }
    if (take(&b, oy, product(2, f), 1, 0, "bias_act y", &y) ||
        take(&b, ob, cols, 0, 1, "bias_act bias", &bias))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    tw_bias_act(y, bias, rows, cols, act);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_adam(PyObject *self, PyObject *args) {
    PyObject *ovar, *om, *ov, *og;
    Py_ssize_t n;
    float alpha, omb1, omb2, beta1, eps;
    int nesterov;
    void *var, *m, *v, *g;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOOnfffffp", &ovar, &om, &ov, &og, &n, &alpha, &omb1, &omb2,
                          &beta1, &eps, &nesterov))
        return NULL;
    if (take(&b, ovar, n, 1, 0, "adam var", &var) || take(&b, om, n, 1, 0, "adam m", &m) ||
        take(&b, ov, n, 1, 0, "adam v", &v) || take(&b, og, n, 0, 0, "adam grad", &g))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    tw_adam(var, m, v, g, n, alpha, omb1, omb2, beta1, eps, nesterov);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_max_pool(PyObject *self, PyObject *args) {
    PyObject *ox, *oy, *ow;
    tw_window g;
    void *x, *y;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOO", &ox, &oy, &ow) || parse_window(ow, &g))
        return NULL;
    if (take(&b, ox, input_size(&g), 0, 0, "max_pool x", &x) ||
        take(&b, oy, output_size(&g, g.c), 1, 0, "max_pool y", &y))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    tw_max_pool(x, y, &g);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_max_pool_grad(PyObject *self, PyObject *args) {
    PyObject *ox, *oy, *ody, *odx, *orelu, *ow;
    tw_window g;
    void *x, *y, *dy, *dx, *relu;
    int status;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOOOO", &ox, &oy, &ody, &odx, &orelu, &ow) ||
        parse_window(ow, &g))
        return NULL;
    int64_t in = input_size(&g), out = output_size(&g, g.c);
    if (take(&b, ox, in, 0, 0, "max_pool_grad x", &x) ||
        take(&b, oy, out, 0, 0, "max_pool_grad y", &y) ||
        take(&b, ody, out, 0, 0, "max_pool_grad dy", &dy) ||
        take(&b, odx, in, 1, 0, "max_pool_grad dx", &dx) ||
        take(&b, orelu, in, 0, 1, "max_pool_grad relu_of", &relu))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    status = tw_max_pool_grad(x, y, dy, dx, relu, &g);
    Py_END_ALLOW_THREADS
    return done(&b, status);
}

static int64_t patch_size(const tw_window *g) {
    int64_t f[] = {g->n, g->oh, g->ow, g->kh, g->kw, g->c};
    return product(6, f);
}

/* im2col(x, cols, window) and its adjoint col2im(cols, dx, window): the same two buffers,
 * read and written the other way round. */
static PyObject *patch_matrix(PyObject *args, int adjoint) {
    PyObject *osrc, *odst, *ow;
    tw_window g;
    void *src, *dst;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOO", &osrc, &odst, &ow) || parse_window(ow, &g))
        return NULL;
    int64_t image = input_size(&g), patches = patch_size(&g);
    if (take(&b, osrc, adjoint ? patches : image, 0, 0, adjoint ? "col2im cols" : "im2col x",
             &src) ||
        take(&b, odst, adjoint ? image : patches, 1, 0, adjoint ? "col2im dx" : "im2col cols",
             &dst))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    if (adjoint)
        tw_col2im(src, dst, &g);
    else
        tw_im2col(src, dst, &g);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_im2col(PyObject *self, PyObject *args) { return patch_matrix(args, 0); }

static PyObject *py_col2im(PyObject *self, PyObject *args) { return patch_matrix(args, 1); }

static int64_t filter_size(const tw_window *g, int64_t o) {
    int64_t f[] = {g->kh, g->kw, g->c, o};
    return product(4, f);
}

static PyObject *py_conv_direct(PyObject *self, PyObject *args) {
    PyObject *ox, *ofl, *ob, *oy, *ow;
    long long o;
    int act;
    tw_window g;
    void *x, *w, *bias, *y;
    int status;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOOLiO", &ox, &ofl, &ob, &oy, &o, &act, &ow) ||
        parse_window(ow, &g))
        return NULL;
    if (act < TW_ACT_NONE || act > TW_ACT_RELU6) {
        PyErr_SetString(PyExc_ValueError, "conv_direct: unknown activation");
        return NULL;
    }
    if (take(&b, ox, input_size(&g), 0, 0, "conv_direct x", &x) ||
        take(&b, ofl, filter_size(&g, o), 0, 0, "conv_direct w", &w) ||
        take(&b, ob, o, 0, 1, "conv_direct bias", &bias) ||
        take(&b, oy, output_size(&g, o), 1, 0, "conv_direct y", &y))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    status = tw_conv_direct(x, w, bias, y, o, act, &g);
    Py_END_ALLOW_THREADS
    return done(&b, status);
}

static PyObject *py_conv_filter_direct(PyObject *self, PyObject *args) {
    PyObject *ox, *ody, *odw, *ow;
    long long o;
    tw_window g;
    void *x, *dy, *dw;
    int status;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOLO", &ox, &ody, &odw, &o, &ow) || parse_window(ow, &g))
        return NULL;
    if (take(&b, ox, input_size(&g), 0, 0, "conv_filter_direct x", &x) ||
        take(&b, ody, output_size(&g, o), 0, 0, "conv_filter_direct dy", &dy) ||
        take(&b, odw, filter_size(&g, o), 1, 0, "conv_filter_direct dw", &dw))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    status = tw_conv_filter_direct(x, dy, dw, o, &g);
    Py_END_ALLOW_THREADS
    return done(&b, status);
}

/* rows x cols, checked: both non-negative and their product representable. */
static int64_t matrix_size(long long rows, long long cols) {
    int64_t f[] = {rows, cols};
    return product(2, f);
}

static PyObject *py_channel_sums(PyObject *self, PyObject *args) {
    PyObject *oa, *ob, *osh, *o1, *o2;
    long long rows, cols;
    void *a, *bb, *sh, *s1, *s2;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOOOLL", &oa, &ob, &osh, &o1, &o2, &rows, &cols))
        return NULL;
    int64_t n = matrix_size(rows, cols);
    if (take(&b, oa, n, 0, 0, "channel_sums a", &a) ||
        take(&b, ob, n, 0, 0, "channel_sums b", &bb) ||
        take(&b, osh, cols, 0, 0, "channel_sums shift", &sh) ||
        take_as(&b, o1, cols, 1, 0, "channel_sums s1", &s1, "d") ||
        take_as(&b, o2, cols, 1, 0, "channel_sums s2", &s2, "d"))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    tw_channel_sums(a, bb, sh, rows, cols, s1, s2);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_bn_forward(PyObject *self, PyObject *args) {
    PyObject *ox, *oy, *op;
    long long rows, cols;
    void *x, *y, *p;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOLL", &ox, &oy, &op, &rows, &cols))
        return NULL;
    int64_t n = matrix_size(rows, cols);
    if (take(&b, ox, n, 0, 0, "bn_forward x", &x) || take(&b, oy, n, 1, 0, "bn_forward y", &y) ||
        take(&b, op, cols < 0 ? -1 : 3 * cols, 0, 0, "bn_forward params", &p))
        return fail(&b);
    const float *v = p;
    Py_BEGIN_ALLOW_THREADS
    tw_bn_forward(x, y, rows, cols, v, v + cols, v + 2 * cols);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_bn_backward(PyObject *self, PyObject *args) {
    PyObject *ody, *ox, *odx, *op;
    long long rows, cols;
    void *dy, *x, *dx, *p;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOOLL", &ody, &ox, &odx, &op, &rows, &cols))
        return NULL;
    int64_t n = matrix_size(rows, cols);
    if (take(&b, ody, n, 0, 0, "bn_backward dy", &dy) ||
        take(&b, ox, n, 0, 0, "bn_backward x", &x) ||
        take(&b, odx, n, 1, 0, "bn_backward dx", &dx) ||
        take(&b, op, cols < 0 ? -1 : 5 * cols, 0, 0, "bn_backward params", &p))
        return fail(&b);
    const float *v = p;
    Py_BEGIN_ALLOW_THREADS
    tw_bn_backward(dy, x, dx, rows, cols, v, v + cols, v + 2 * cols, v + 3 * cols,
                   v + 4 * cols);
    Py_END_ALLOW_THREADS
    return done(&b, 0);
}

static PyObject *py_scatter_rows(PyObject *self, PyObject *args) {
    PyObject *op, *oi, *ou;
    long long rows, cols, n;
    int subtract, wide, status;
    void *params, *idx, *upd;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOLLLpp", &op, &oi, &ou, &rows, &cols, &n, &subtract, &wide))
        return NULL;
    const char *code = wide ? "d" : "f";
    if (take_as(&b, op, matrix_size(rows, cols), 1, 0, "scatter_rows params", &params, code) ||
        take_as(&b, oi, n, 0, 0, "scatter_rows indices", &idx, "q") ||
        take_as(&b, ou, matrix_size(n, cols), 0, 0, "scatter_rows updates", &upd, code))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    status = wide ? tw_scatter_rows_f64(params, rows, cols, idx, n, upd, subtract)
                  : tw_scatter_rows_f32(params, rows, cols, idx, n, upd, subtract);
    Py_END_ALLOW_THREADS
    release(&b);
    if (status < 0) {
        PyErr_SetString(PyExc_ValueError, "scatter_rows: an index is outside [0, rows)");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_sparse_xent(PyObject *self, PyObject *args) {
    PyObject *ox, *ol, *oloss, *og;
    long long rows, cols;
    void *x, *labels, *loss, *g;
    int status;
    bufs b = {.count = 0};
    if (!PyArg_ParseTuple(args, "OOOOLL", &ox, &ol, &oloss, &og, &rows, &cols))
        return NULL;
    int64_t n = matrix_size(rows, cols);
    if (take(&b, ox, n, 0, 0, "sparse_xent logits", &x) ||
        take_as(&b, ol, rows, 0, 0, "sparse_xent labels", &labels, "q") ||
        take(&b, oloss, rows, 1, 0, "sparse_xent loss", &loss) ||
        take(&b, og, n, 1, 0, "sparse_xent backprop", &g))
        return fail(&b);
    Py_BEGIN_ALLOW_THREADS
    status = tw_sparse_xent(x, labels, rows, cols, loss, g);
    Py_END_ALLOW_THREADS
    release(&b);
    if (status < 0) {
        PyErr_SetString(PyExc_ValueError, "sparse_xent: a label is outside [0, cols)");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"relu_grad", py_relu_grad, METH_VARARGS, "relu_grad(g, x, out, n): out = g * (x > 0)"},
    {"bias_act", py_bias_act, METH_VARARGS,
     "bias_act(y, bias|None, rows, cols, act): y += bias; y = act(y), in place"},
    {"adam", py_adam, METH_VARARGS,
     "adam(var, m, v, g, n, alpha, 1-beta1, 1-beta2, beta1, eps, nesterov): ApplyAdam"},
    {"max_pool", py_max_pool, METH_VARARGS, "max_pool(x, y, window)"},
    {"max_pool_grad", py_max_pool_grad, METH_VARARGS,
     "max_pool_grad(x, y, dy, dx, relu_of|None, window)"},
    {"im2col", py_im2col, METH_VARARGS, "im2col(x, cols, window)"},
    {"col2im", py_col2im, METH_VARARGS, "col2im(cols, dx, window)"},
    {"conv_direct", py_conv_direct, METH_VARARGS,
     "conv_direct(x, w, bias|None, y, out_channels, act, window)"},
    {"conv_filter_direct", py_conv_filter_direct, METH_VARARGS,
     "conv_filter_direct(x, dy, dw, out_channels, window)"},
    {"channel_sums", py_channel_sums, METH_VARARGS,
     "channel_sums(a, b, shift, s1, s2, rows, cols): s1 += sum a; s2 += sum a * (b - shift)"},
    {"bn_forward", py_bn_forward, METH_VARARGS,
     "bn_forward(x, y, params[mean, k, offset], rows, cols): y = (x - mean) * k + offset"},
    {"bn_backward", py_bn_backward, METH_VARARGS,
     "bn_backward(dy, x, dx, params[mean, inv, a, b, c], rows, cols)"},
    {"scatter_rows", py_scatter_rows, METH_VARARGS,
     "scatter_rows(params, indices, updates, rows, cols, n, subtract, float64): "
     "params[indices[i]] +=/-= updates[i] in order"},
    {"sparse_xent", py_sparse_xent, METH_VARARGS,
     "sparse_xent(logits, labels, loss, backprop, rows, cols): "
     "SparseSoftmaxCrossEntropyWithLogits"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "tensorweave's compiled float32 CPU loops", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddIntConstant(m, "ACT_NONE", TW_ACT_NONE) ||
              PyModule_AddIntConstant(m, "ACT_RELU", TW_ACT_RELU) ||
              PyModule_AddIntConstant(m, "ACT_RELU6", TW_ACT_RELU6))) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
