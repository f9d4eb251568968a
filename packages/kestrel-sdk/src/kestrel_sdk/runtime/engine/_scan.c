/* ``first_le`` and ``first_ge``: the search for the next bar a resting order can act, in C
 * (optional).
 *
 * ``python -m kestrel_sdk.runtime.build`` compiles this file beside the mypyc modules;
 * without that build, ``engine/fill.py`` screens chunks of the column with ``min``/``max``
 * over a slice, which copies the slice and boxes every price it compares. Here the
 * column's buffer (an ``array('q')``: one signed 64-bit price per bar) is read in place.
 *
 * first_le(col, x, start, end) -> int
 * first_ge(col, x, start, end) -> int
 *     The first index in ``start..end`` (inclusive) with ``col[i] <= x`` (``>= x``),
 *     else -1. ``start > end`` is -1; a range outside the column is an IndexError. ``x``
 *     may be any integer: one beyond 64 bits compares as Python would.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

static PyObject *
scan(PyObject *const *args, Py_ssize_t nargs, int less)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "first_le/first_ge take 4 arguments");
        return NULL;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    Py_ssize_t start = PyLong_AsSsize_t(args[2]);
    Py_ssize_t end = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (start > end) {
        return PyLong_FromLong(-1);
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        return NULL;
    }
    PyObject *found = NULL;
    if (view.itemsize != 8 || view.format == NULL
        || (strcmp(view.format, "q") != 0 && strcmp(view.format, "l") != 0)) {
        PyErr_SetString(PyExc_TypeError, "first_le/first_ge: the column must be an array('q')");
        goto done;
    }
    Py_ssize_t length = view.len / 8;
    if (start < 0 || end >= length) {
        PyErr_SetString(PyExc_IndexError, "first_le/first_ge: the range is outside the column");
        goto done;
    }
    const int64_t *col = (const int64_t *)view.buf;
    Py_ssize_t at = -1;
    if (overflow != 0) { /* x beyond 64 bits: every price is on one side of it */
        int all = less ? overflow > 0 : overflow < 0;
        at = all ? start : -1;
    }
    else if (less) {
        for (Py_ssize_t i = start; i <= end; i++) {
            if (col[i] <= x) {
                at = i;
                break;
            }
        }
    }
    else {
        for (Py_ssize_t i = start; i <= end; i++) {
            if (col[i] >= x) {
                at = i;
                break;
            }
        }
    }
    found = PyLong_FromSsize_t(at);
done:
    PyBuffer_Release(&view);
    return found;
}

static PyObject *
first_le(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    return scan(args, nargs, 1);
}

static PyObject *
first_ge(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    return scan(args, nargs, 0);
}

static PyMethodDef methods[] = {
    {"first_le", (PyCFunction)(void (*)(void))first_le, METH_FASTCALL,
     "first_le(col, x, start, end): the first index in start..end with col[i] <= x, else -1."},
    {"first_ge", (PyCFunction)(void (*)(void))first_ge, METH_FASTCALL,
     "first_ge(col, x, start, end): the first index in start..end with col[i] >= x, else -1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kestrel_sdk.runtime.engine._scan",
    "The next bar a resting order can act (optional C primitive).", 0, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModule_Create(&module);
}
