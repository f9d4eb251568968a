/* ``dump``: a protocol object as plain JSON data, in C (optional).
 *
 * ``python -m kestrel_sdk.runtime.build`` compiles this file beside the mypyc modules;
 * ``runtime/dumps.py`` installs it as ``kestrel_protocol``'s dumper when the compiled
 * runtime runs. It gives exactly ``model.model_dump(mode="json", by_alias=True,
 * exclude_unset=True)`` for the objects it accepts, and declines (``None``) the rest,
 * which pydantic then dumps: a face dumps every tool result this way, and pydantic's
 * serializer was a quarter of an MCP round trip's instructions.
 *
 * configure(plans, plan_for, descriptors)
 * dump(obj) -> dict | None
 *     ``plans`` maps a model class to its plan, ``{name: (key, allowed)}`` per field
 *     (``allowed``: the model classes the field's annotation names, a frozenset), or to
 *     ``None`` for a class this dump must decline (a serializer of its own, a computed
 *     or excluded field, ...); ``plan_for(cls)`` makes and stores a missing one. Members
 *     are dumped in the order of the object's __dict__, as pydantic dumps them. ``descriptors``: BaseModel's member descriptors of
 *     __pydantic_fields_set__ and __pydantic_extra__. Accepted: exact str, int, bool and
 *     None, dicts with str keys and lists of those, and models whose class has a plan,
 *     in a field whose annotation names that class; a member not in the fields set is
 *     left out, extras follow the fields. Anything else declines the whole dump.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Declines: a borrowed marker, never returned to Python. */
#define DECLINE Py_NotImplemented

typedef struct {
    PyObject *plans;
    PyObject *plan_for;
    PyObject *fields_descriptor;
    PyObject *extra_descriptor;
} Context;

static Context configured = {NULL, NULL, NULL, NULL}; /* set once by configure() */

static PyObject *walk(Context *ctx, PyObject *value, PyObject *allowed, int depth);

static PyObject *
plan_of(Context *ctx, PyTypeObject *type)
{
    PyObject *plan = PyDict_GetItemWithError(ctx->plans, (PyObject *)type); /* borrowed */
    if (plan != NULL || PyErr_Occurred()) {
        return plan;
    }
    PyObject *made = PyObject_CallOneArg(ctx->plan_for, (PyObject *)type);
    if (made == NULL) {
        return NULL;
    }
    Py_DECREF(made); /* plan_for stored it in plans */
    return PyDict_GetItemWithError(ctx->plans, (PyObject *)type);
}

static PyObject *
slot(PyObject *descriptor, PyObject *obj)
{
    descrgetfunc get = Py_TYPE(descriptor)->tp_descr_get;
    if (get == NULL) {
        PyErr_SetString(PyExc_TypeError, "dump: a descriptor cannot be read");
        return NULL;
    }
    return get(descriptor, obj, (PyObject *)Py_TYPE(obj));
}

static PyObject *
walk_model(Context *ctx, PyObject *obj, PyObject *plan, int depth)
{
    PyObject *members = PyObject_GenericGetDict(obj, NULL);
    PyObject *fields = members == NULL ? NULL : slot(ctx->fields_descriptor, obj);
    PyObject *extra = fields == NULL ? NULL : slot(ctx->extra_descriptor, obj);
    PyObject *out = extra == NULL ? NULL : PyDict_New();
    PyObject *result = NULL;
    if (out == NULL) {
        goto done;
    }
    if (!PyDict_Check(members) || !PyAnySet_Check(fields)) {
        result = DECLINE;
        goto done;
    }
    /* pydantic dumps a model's __dict__ in its own order (a constructed object's is
     * the order its members were given in), each member the plan knows */
    Py_ssize_t at = 0;
    PyObject *name, *value;
    while (PyDict_Next(members, &at, &name, &value)) {
        PyObject *entry = PyDict_GetItemWithError(plan, name); /* borrowed */
        if (entry == NULL) {
            result = PyErr_Occurred() ? NULL : DECLINE; /* not a field: pydantic's to judge */
            goto done;
        }
        int given = PySet_Contains(fields, name);
        if (given < 0) {
            goto done;
        }
        if (!given) {
            continue;
        }
        PyObject *dumped = walk(ctx, value, PyTuple_GET_ITEM(entry, 1), depth + 1);
        if (dumped == NULL || dumped == DECLINE) {
            result = dumped;
            goto done;
        }
        int failed = PyDict_SetItem(out, PyTuple_GET_ITEM(entry, 0), dumped);
        Py_DECREF(dumped);
        if (failed < 0) {
            goto done;
        }
    }
    if (extra != Py_None && (!PyDict_CheckExact(extra) || PyDict_GET_SIZE(extra) > 0)) {
        /* extras come from JSON: a dict of any values but models (``allowed`` is empty) */
        PyObject *dumped = walk(ctx, extra, NULL, depth + 1);
        if (dumped == NULL || dumped == DECLINE) {
            result = dumped;
            goto done;
        }
        int failed = PyDict_Update(out, dumped);
        Py_DECREF(dumped);
        if (failed < 0) {
            goto done;
        }
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(members);
    Py_XDECREF(fields);
    Py_XDECREF(extra);
    Py_XDECREF(out);
    return result;
}

/* A new reference to the dumped value, DECLINE (borrowed), or NULL with an exception. */
static PyObject *
walk(Context *ctx, PyObject *value, PyObject *allowed, int depth)
{
    if (depth > 64) {
        return DECLINE; /* deeper than any protocol object: pydantic's to judge */
    }
    if (PyUnicode_CheckExact(value) || PyLong_CheckExact(value) || PyBool_Check(value)
        || value == Py_None) {
        return Py_NewRef(value);
    }
    if (PyDict_CheckExact(value)) {
        PyObject *out = PyDict_New();
        if (out == NULL) {
            return NULL;
        }
        Py_ssize_t at = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &at, &key, &item)) {
            PyObject *dumped = PyUnicode_CheckExact(key) ? walk(ctx, item, allowed, depth + 1)
                                                         : DECLINE;
            if (dumped == NULL || dumped == DECLINE) {
                Py_DECREF(out);
                return dumped;
            }
            int failed = PyDict_SetItem(out, key, dumped);
            Py_DECREF(dumped);
            if (failed < 0) {
                Py_DECREF(out);
                return NULL;
            }
        }
        return out;
    }
    if (PyList_CheckExact(value)) {
        Py_ssize_t count = PyList_GET_SIZE(value);
        PyObject *out = PyList_New(count);
        if (out == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *dumped = walk(ctx, PyList_GET_ITEM(value, i), allowed, depth + 1);
            if (dumped == NULL || dumped == DECLINE) {
                Py_DECREF(out);
                return dumped;
            }
            PyList_SET_ITEM(out, i, dumped);
        }
        return out;
    }
    PyTypeObject *type = Py_TYPE(value);
    if (allowed == NULL || !PyFrozenSet_CheckExact(allowed)) {
        return DECLINE;
    }
    int named = PySet_Contains(allowed, (PyObject *)type);
    if (named <= 0) {
        return named < 0 ? NULL : DECLINE;
    }
    PyObject *plan = plan_of(ctx, type);
    if (plan == NULL) {
        return PyErr_Occurred() ? NULL : DECLINE;
    }
    if (!PyDict_CheckExact(plan)) {
        return DECLINE;
    }
    return walk_model(ctx, value, plan, depth);
}

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_CheckExact(args[0]) || !PyCallable_Check(args[1])
        || !PyTuple_CheckExact(args[2]) || PyTuple_GET_SIZE(args[2]) != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "configure(plans: dict, plan_for: callable, descriptors: 2-tuple)");
        return NULL;
    }
    Py_XSETREF(configured.plans, Py_NewRef(args[0]));
    Py_XSETREF(configured.plan_for, Py_NewRef(args[1]));
    Py_XSETREF(configured.fields_descriptor, Py_NewRef(PyTuple_GET_ITEM(args[2], 0)));
    Py_XSETREF(configured.extra_descriptor, Py_NewRef(PyTuple_GET_ITEM(args[2], 1)));
    Py_RETURN_NONE;
}

static PyObject *
dump(PyObject *Py_UNUSED(module), PyObject *obj)
{
    if (configured.plans == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dump: configure() was not called");
        return NULL;
    }
    PyObject *plan = plan_of(&configured, Py_TYPE(obj));
    if (plan == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    if (!PyDict_CheckExact(plan)) {
        Py_RETURN_NONE;
    }
    PyObject *found = walk_model(&configured, obj, plan, 0);
    if (found == DECLINE) {
        Py_RETURN_NONE;
    }
    return found;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(plans, plan_for, descriptors): what dump() works with."},
    {"dump", (PyCFunction)dump, METH_O, "dump(obj): the object's JSON data, or None (declined)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kestrel_sdk.runtime._dump",
    "A protocol object's JSON data (optional C primitive).", 0, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__dump(void)
{
    return PyModule_Create(&module);
}
