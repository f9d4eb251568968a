/* ``append_mapped``: a step file's fast-path append, in C (optional).
 *
 * ``python -m kestrel_sdk.runtime.build`` compiles this file beside the mypyc modules;
 * without that build, ``steps.py``'s ``StepFiles.fast_append`` does the same through
 * ``fcntl.flock`` and the ``mmap`` object's item and slice assignment.
 *
 * append_mapped(fd, view, size, line) -> int
 *     flock(LOCK_EX); when ``line`` fits in ``view`` (the file's shared mapping) at
 *     ``size`` and the byte there is still NUL (no other store appended or removed the
 *     file since: see steps.py), ``line`` is copied there, its first byte first; then
 *     flock(LOCK_UN). Returns the new size, -1 when the file is not as the caller left
 *     it, or -2 when the line does not fit (nothing written either way). Two system
 *     calls and no write: the bytes are in the operating system's page cache once the
 *     copy ends, which a process kill does not lose. The lock is first tried without
 *     blocking, holding the GIL; when another process holds it, the wait releases the
 *     GIL. EINTR runs the signal handlers and retries, as Python's os functions do.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>

/* flock(fd, LOCK_EX): 0, or -1 with a Python error set. */
static int
lock(int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        return 0;
    }
    int done = -1;
    while (errno == EWOULDBLOCK || errno == EINTR) {
        if (errno == EINTR && PyErr_CheckSignals() != 0) {
            return -1;
        }
        Py_BEGIN_ALLOW_THREADS done = flock(fd, LOCK_EX);
        Py_END_ALLOW_THREADS
        if (done == 0) {
            return 0;
        }
    }
    PyErr_SetFromErrno(PyExc_OSError);
    return -1;
}

/* flock(fd, LOCK_UN) (which does not block): 0, or -1 with a Python error set unless
 * one is already being raised (it stays the one). */
static int
unlock(int fd)
{
    int done;
    do {
        done = flock(fd, LOCK_UN);
    } while (done < 0 && errno == EINTR);
    if (done < 0 && !PyErr_Occurred()) {
        PyErr_SetFromErrno(PyExc_OSError);
    }
    return done;
}

static PyObject *
append_mapped(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "append_mapped takes 4 arguments");
        return NULL;
    }
    long descriptor = PyLong_AsLong(args[0]);
    Py_ssize_t size = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (descriptor < 0 || descriptor > INT_MAX || size < 0) {
        PyErr_SetString(PyExc_ValueError, "append_mapped: not a file descriptor and size");
        return NULL;
    }
    if (!PyBytes_CheckExact(args[3]) || PyBytes_GET_SIZE(args[3]) == 0) {
        PyErr_SetString(PyExc_TypeError, "append_mapped: line must be non-empty bytes");
        return NULL;
    }
    int fd = (int)descriptor;
    const char *line = PyBytes_AS_STRING(args[3]);
    Py_ssize_t length = PyBytes_GET_SIZE(args[3]);
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_WRITABLE) < 0) {
        return NULL;
    }
    if (lock(fd) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    char *at = (char *)view.buf + size;
    long long result;
    if (size > view.len - length) {
        result = -2;
    }
    else if (*at != '\0') {
        result = -1;
    }
    else {
        /* The first byte first: a copy cut short by a kill leaves a non-NUL byte at
         * ``size``, which every store then reads as a torn line (steps.py). */
        *at = line[0];
        __atomic_thread_fence(__ATOMIC_RELEASE);
        memcpy(at + 1, line + 1, (size_t)(length - 1));
        result = (long long)size + (long long)length;
    }
    PyBuffer_Release(&view);
    if (unlock(fd) < 0) {
        return NULL;
    }
    return PyLong_FromLongLong(result);
}

static PyMethodDef methods[] = {
    {"append_mapped", (PyCFunction)(void (*)(void))append_mapped, METH_FASTCALL,
     "append_mapped(fd, view, size, line): the new size, -1 when the file is not as "
     "left, -2 when the line does not fit."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kestrel_sdk.runtime._append",
    "A step file's checked append into its mapping (optional C primitive).", 0, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__append(void)
{
    return PyModule_Create(&module);
}
