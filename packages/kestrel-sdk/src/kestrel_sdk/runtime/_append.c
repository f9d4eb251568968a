/* ``append_checked``: a step file's fast-path append, in C (optional).
 *
 * ``python -m kestrel_sdk.runtime.build`` compiles this file beside the mypyc modules;
 * without that build, ``steps.py``'s ``StepFiles.fast_append`` makes the same four system
 * calls through ``fcntl.flock``, ``os.fstat`` (which builds a ``stat_result`` of twenty
 * members, float times included) and ``os.write``.
 *
 * append_checked(fd, size, line) -> int
 *     flock(LOCK_EX), fstat, and when the file is ``size`` bytes long and still linked,
 *     one write of ``line``; then flock(LOCK_UN). Returns the new size, or -1 when the
 *     file is not as the caller left it (nothing written). A short write is undone
 *     (ftruncate to ``size``) and raised as OSError. System calls run without the GIL;
 *     EINTR runs the signal handlers and retries, as Python's os functions do.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* One system call without the GIL, retried on EINTR after the signal handlers ran. */
#define RETRY(result, call)                                                        \
    do {                                                                           \
        Py_BEGIN_ALLOW_THREADS result = (call);                                    \
        Py_END_ALLOW_THREADS                                                       \
    } while ((result) < 0 && errno == EINTR && PyErr_CheckSignals() == 0)

/* The file's size and link count: 0, or -1 with errno set. */
static int
size_and_links(int fd, long long *size, unsigned long long *links)
{
#if defined(STATX_SIZE) && defined(STATX_NLINK) && defined(AT_EMPTY_PATH)
    static int statx_refused = 0; /* ENOSYS or EPERM (a seccomp filter) once: fstat */
    if (!statx_refused) {
        struct statx sx;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_SIZE | STATX_NLINK, &sx) == 0) {
            if ((sx.stx_mask & (STATX_SIZE | STATX_NLINK)) == (STATX_SIZE | STATX_NLINK)) {
                *size = (long long)sx.stx_size;
                *links = (unsigned long long)sx.stx_nlink;
                return 0;
            }
        }
        else if (errno != ENOSYS && errno != EPERM) {
            return -1;
        }
        else {
            statx_refused = 1;
        }
    }
#endif
    struct stat st;
    if (fstat(fd, &st) < 0) {
        return -1;
    }
    *size = (long long)st.st_size;
    *links = (unsigned long long)st.st_nlink;
    return 0;
}

static void
unlock(int fd)
{
    int done;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback); /* an error being raised stays the one */
    RETRY(done, flock(fd, LOCK_UN));
    PyErr_Restore(type, value, traceback);
}

static PyObject *
append_checked(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "append_checked takes 3 arguments");
        return NULL;
    }
    long descriptor = PyLong_AsLong(args[0]);
    long long size = PyLong_AsLongLong(args[1]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (descriptor < 0 || descriptor > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "append_checked: not a file descriptor");
        return NULL;
    }
    int fd = (int)descriptor;
    if (!PyBytes_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "append_checked: line must be bytes");
        return NULL;
    }
    const char *data = PyBytes_AS_STRING(args[2]);
    Py_ssize_t length = PyBytes_GET_SIZE(args[2]);
    int done;
    RETRY(done, flock(fd, LOCK_EX));
    if (done < 0) {
        return PyErr_Occurred() ? NULL : PyErr_SetFromErrno(PyExc_OSError);
    }
    long long found_size = 0;
    unsigned long long links = 0;
    RETRY(done, size_and_links(fd, &found_size, &links));
    if (done < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetFromErrno(PyExc_OSError);
        }
        unlock(fd);
        return NULL;
    }
    if (found_size != size || links == 0) {
        unlock(fd);
        return PyLong_FromLong(-1);
    }
    ssize_t written;
    RETRY(written, write(fd, data, (size_t)length));
    if (written != length) {
        if (!PyErr_Occurred()) {
            if (written < 0) {
                PyErr_SetFromErrno(PyExc_OSError);
            }
            else {
                PyErr_Format(PyExc_OSError, "short write to a step file (%zd of %zd bytes)",
                             written, length);
            }
        }
        int undone;
        RETRY(undone, ftruncate(fd, (off_t)size));
        (void)undone;
        unlock(fd);
        return NULL;
    }
    RETRY(done, flock(fd, LOCK_UN));
    if (done < 0) {
        return PyErr_Occurred() ? NULL : PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyLong_FromLongLong(size + (long long)length);
}

static PyMethodDef methods[] = {
    {"append_checked", (PyCFunction)(void (*)(void))append_checked, METH_FASTCALL,
     "append_checked(fd, size, line): the new size, or -1 when the file is not as left."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kestrel_sdk.runtime._append",
    "A step file's checked append (optional C primitive).", 0, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__append(void)
{
    return PyModule_Create(&module);
}
