/* ``construct``: a pydantic model instance from its members, in C (optional).
 *
 * ``python -m kestrel_sdk.runtime.build`` compiles this file beside the mypyc modules;
 * without that build, ``engine/wire.py``'s ``construct`` does the same in Python through
 * ``object.__setattr__`` and the slot wrappers (five calls, each packing its arguments in
 * a tuple: with nine models a step, a fifth of a compiled step). Both give the same
 * object (tests/kestrel_sdk/runtime/test_native.py).
 *
 * construct(cls, members, fields_set, extra, descriptors) -> cls instance
 *     ``members`` becomes the instance's __dict__; the slots pydantic keeps beside it are
 *     set through their own member descriptors (``descriptors``: BaseModel's descriptors
 *     of __pydantic_fields_set__, __pydantic_extra__ and __pydantic_private__, which is
 *     set to None). No validation: the caller passes members already in wire form.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static int
set_slot(PyObject *descriptor, PyObject *obj, PyObject *value)
{
    descrsetfunc set = Py_TYPE(descriptor)->tp_descr_set;
    if (set == NULL) {
        PyErr_SetString(PyExc_TypeError, "construct: a descriptor cannot be set");
        return -1;
    }
    return set(descriptor, obj, value);
}

static PyObject *
construct(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "construct takes 5 arguments");
        return NULL;
    }
    PyObject *cls = args[0], *members = args[1], *fields = args[2], *extra = args[3];
    PyObject *descriptors = args[4];
    if (!PyType_Check(cls) || !PyDict_CheckExact(members) || !PyTuple_CheckExact(descriptors)
        || PyTuple_GET_SIZE(descriptors) != 3) {
        PyErr_SetString(PyExc_TypeError,
                        "construct(cls: type, members: dict, fields_set, extra, descriptors: 3-tuple)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    PyObject *obj = type->tp_alloc(type, 0);
    if (obj == NULL) {
        return NULL;
    }
    if (PyObject_GenericSetDict(obj, members, NULL) < 0
        || set_slot(PyTuple_GET_ITEM(descriptors, 0), obj, fields) < 0
        || set_slot(PyTuple_GET_ITEM(descriptors, 1), obj, extra) < 0
        || set_slot(PyTuple_GET_ITEM(descriptors, 2), obj, Py_None) < 0) {
        Py_DECREF(obj);
        return NULL;
    }
    return obj;
}

static PyMethodDef methods[] = {
    {"construct", (PyCFunction)(void (*)(void))construct, METH_FASTCALL,
     "construct(cls, members, fields_set, extra, descriptors): a model without validation."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kestrel_sdk.runtime.engine._construct",
    "A pydantic model instance from its members (optional C primitive).", 0, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__construct(void)
{
    return PyModule_Create(&module);
}
