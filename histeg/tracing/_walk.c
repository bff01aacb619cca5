/* The structural walk of a value's abstraction, in C.
 *
 * Abstraction._walk (values.py) is the specification and the reference of the parity tests; this module
 * walks the commonest shapes in C (exact strings, ints, floats, bools and None, exact lists, tuples and dicts,
 * a program's object at the top, shown by its fields) and hands every other value to _walk, sharing the
 * budget. A parser's state (a list of token dicts in an attribute) took 80 us in Python at every method call.
 *
 *   Walker(tables).text(value, cls, budget: [int], depth) -> str | None      tables: Abstraction.walk_tables()
 *
 * As in Python, no line of project code runs: only builtin getters are called, only exact builtin containers
 * are iterated, and only what the Python walk hashes is hashed (classes, exact strings, tuples of names).
 * Every cache is filled by Python (a miss calls the Python method that fills it).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_interpreter.h"
#include "_textmemo.h"

#define INTERFACE 3 /* values.WALK_INTERFACE: 2 adds inline_namespace(), 3 the kinds of classes, functions, methods, exceptions */
#define MAX_DEPTH 3
#define MAX_REPR 120
#define MAX_CACHED_STRING (4 * MAX_REPR)
#define MAX_INLINE_FIELDS 64

enum {
    T_KINDS, T_NAMES, T_STRINGS, T_LAYOUTS, T_PLANS, T_REDACTED,
    T_STR, T_SCALAR, T_OBJECT, T_SUBCLASS, T_STANDARD, T_CLASS, T_FUNCTION, T_BOUND, T_EXCEPTION, T_SHOWN_IN_FIELDS,
    T_WALK, T_CLASSIFY, T_TYPE_NAME, T_STRING, T_CAP, T_LAYOUT, T_PLAN, T_REDACTS, T_SECRET,
    T_COUNT
};

typedef struct {
    PyObject_HEAD
    PyObject *tables; /* a tuple of T_COUNT items, in the order above */
    TextMemo memo;    /* texts of unchanged containers (_textmemo.h) */
} WalkerObject;

#define T(w, k) PyTuple_GET_ITEM((w)->tables, (k))

/* One walk: the budget is kept here and handed to Python in the caller's list whenever Python walks. */
typedef struct {
    WalkerObject *w;
    PyObject *budget_list;
    Py_ssize_t budget;
    TextShape *shape;  /* the nodes read for the container being walked (_textmemo.h), NULL outside one */
    int unfit;         /* the walk showed something a shape cannot say: its text is not kept */
} Walk;

static PyObject *ELLIPSIS_PLUS, *COMMA_SPACE, *SPACE, *TEXT_TRUE, *TEXT_FALSE, *TEXT_NONE;
static PyObject *TEXT_COLON, *TEXT_OPEN, *TEXT_CLOSE, *TEXT_CLOSE_ONE, *TEXT_OPEN_BRACKET, *TEXT_CLOSE_BRACKET, *TEXT_OPEN_BRACE, *TEXT_CLOSE_BRACE;

static PyObject *walk_text(Walk *k, PyObject *value, PyTypeObject *cls, Py_ssize_t depth);

/* The texts `parts` (exact strings), `separator` (a string or NULL) between each two, in one new string: made in
 * one piece, where PyUnicode_FromFormat parsed its format and PyUnicode_Join made a string of its own first (a dict's
 * text made three strings per item). */
static PyObject *
concat(PyObject *const *parts, Py_ssize_t n, PyObject *separator)
{
    Py_ssize_t length = 0;
    Py_UCS4 widest = 127;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_Check(parts[i])) {
            PyErr_SetString(PyExc_TypeError, "a text must be a str");
            return NULL;
        }
        length += PyUnicode_GET_LENGTH(parts[i]);
        Py_UCS4 most = PyUnicode_MAX_CHAR_VALUE(parts[i]);
        widest = most > widest ? most : widest;
    }
    if (separator != NULL && n > 1) {
        length += (n - 1) * PyUnicode_GET_LENGTH(separator);
        Py_UCS4 most = PyUnicode_MAX_CHAR_VALUE(separator);
        widest = most > widest ? most : widest;
    }
    PyObject *text = PyUnicode_New(length, widest);
    if (text == NULL) {
        return NULL;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0 && separator != NULL) {
            if (PyUnicode_CopyCharacters(text, at, separator, 0, PyUnicode_GET_LENGTH(separator)) < 0) {
                Py_DECREF(text);
                return NULL;
            }
            at += PyUnicode_GET_LENGTH(separator);
        }
        if (PyUnicode_CopyCharacters(text, at, parts[i], 0, PyUnicode_GET_LENGTH(parts[i])) < 0) {
            Py_DECREF(text);
            return NULL;
        }
        at += PyUnicode_GET_LENGTH(parts[i]);
    }
    return text;
}

/* What a walk reads, for the shape of the container it is in (see container_text). */
static void
record(Walk *k, PyObject *scalar, PyTypeObject *type, Py_ssize_t size, Py_ssize_t shown)
{
    if (k->shape == NULL || k->unfit) {
        return;
    }
    TextNode node = {scalar, type, size, shown};
    if (k->shape->count >= TEXT_MEMO_MAX_NODES || text_shape_add(k->shape, &node, 1) < 0) {
        PyErr_Clear();
        k->unfit = 1;  /* too large to keep, or no memory: walked again next time */
    }
}

/* A str, int, float, bool or None, shown by its value. */
static void
record_scalar(Walk *k, PyObject *value)
{
    if (PyUnicode_CheckExact(value) && PyUnicode_GET_LENGTH(value) > MAX_CACHED_STRING) {
        k->unfit = 1;  /* not held for long */
        return;
    }
    record(k, value, Py_TYPE(value), -1, -1);
}

/* An object shown by its class's name. */
static void
record_class(Walk *k, PyTypeObject *cls)
{
    record(k, NULL, cls, -1, -1);
}

/* A builtin container, or a tuple subclass, shown by its length alone. */
static void
record_length(Walk *k, PyObject *value, PyTypeObject *shape)
{
    if (Py_TYPE(value) != shape && !(shape == &PyTuple_Type && PyTuple_Check(value))) {
        k->unfit = 1;
        return;
    }
    record(k, NULL, Py_TYPE(value), text_container_length(value), -1);
}

static void
record_unfit(Walk *k)
{
    k->unfit = 1;
}

static int
sync_out(Walk *k)
{
    PyObject *n = PyLong_FromSsize_t(k->budget);
    if (n == NULL) {
        return -1;
    }
    return PyList_SetItem(k->budget_list, 0, n);  /* steals n */
}

static int
sync_in(Walk *k)
{
    PyObject *n = PyList_GET_SIZE(k->budget_list) ? PyList_GET_ITEM(k->budget_list, 0) : NULL;
    if (n == NULL || !PyLong_Check(n)) {
        PyErr_SetString(PyExc_TypeError, "the walk's budget must be a list holding an int");
        return -1;
    }
    k->budget = PyLong_AsSsize_t(n);
    return k->budget == -1 && PyErr_Occurred() ? -1 : 0;
}

/* Abstraction._walk(value, cls, budget, depth): the Python walk of one value, on the shared budget. */
static PyObject *
python_walk(Walk *k, PyObject *value, PyTypeObject *cls, Py_ssize_t depth)
{
    if (sync_out(k) < 0) {
        return NULL;
    }
    PyObject *d = PyLong_FromSsize_t(depth);
    if (d == NULL) {
        return NULL;
    }
    PyObject *args[4] = {value, (PyObject *)cls, k->budget_list, d};
    PyObject *text = PyObject_Vectorcall(T(k->w, T_WALK), args, 4, NULL);
    Py_DECREF(d);
    if (text == NULL || sync_in(k) < 0) {
        Py_XDECREF(text);
        return NULL;
    }
    return text;
}

/* table[key] when the table has it, else method(key), which fills the table: a new reference. */
static PyObject *
cached(Walk *k, int table, int method, PyObject *key)
{
    PyObject *found = PyDict_GetItemWithError(T(k->w, table), key);
    if (found != NULL) {
        return Py_NewRef(found);
    }
    return PyErr_Occurred() ? NULL : PyObject_CallOneArg(T(k->w, method), key);
}

/* (kind, base) of `cls` (Abstraction._classify's answer, remembered): a new reference. */
static PyObject *
kind_of(Walk *k, PyTypeObject *cls)
{
    PyObject *found = cached(k, T_KINDS, T_CLASSIFY, (PyObject *)cls);
    if (found != NULL && (!PyTuple_CheckExact(found) || PyTuple_GET_SIZE(found) != 2)) {
        Py_DECREF(found);
        PyErr_SetString(PyExc_TypeError, "a kind must be a (kind, base) pair");
        return NULL;
    }
    return found;
}

/* Abstraction.type_name(cls), a new reference. */
static PyObject *
name_of(Walk *k, PyTypeObject *cls)
{
    return cached(k, T_NAMES, T_TYPE_NAME, (PyObject *)cls);
}

/* Abstraction._string(value) of an exact string: the cache's, or Python's (which fills the cache; a long one it never
 * keeps is hashed there). */
static PyObject *
string_text(Walk *k, PyObject *value)
{
    return PyUnicode_GET_LENGTH(value) <= MAX_CACHED_STRING ? cached(k, T_STRINGS, T_STRING, value)
                                                            : PyObject_CallOneArg(T(k->w, T_STRING), value);
}

/* _scalar(value, cls) of an exact int, float, bool or None: cap(repr(value)), or "<repr failed: Name>". */
static PyObject *
scalar_text(Walk *k, PyObject *value)
{
    if (value == Py_True) {
        return Py_NewRef(TEXT_TRUE);
    }
    if (value == Py_False) {
        return Py_NewRef(TEXT_FALSE);
    }
    if (value == Py_None) {
        return Py_NewRef(TEXT_NONE);
    }
    PyObject *text = PyObject_Repr(value);
    if (text == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) {
            return NULL;
        }
        PyObject *exc = PyErr_GetRaisedException(), *name = PyType_GetName(Py_TYPE(exc));
        text = name ? PyUnicode_FromFormat("<repr failed: %U>", name) : NULL;
        Py_XDECREF(name);
        Py_DECREF(exc);
        return text;
    }
    if (PyUnicode_GET_LENGTH(text) <= MAX_REPR) {
        return text;
    }
    PyObject *capped = PyObject_CallOneArg(T(k->w, T_CAP), text);
    Py_DECREF(text);
    return capped;
}

static int
is_scalar_type(PyTypeObject *cls)
{
    return cls == &PyLong_Type || cls == &PyFloat_Type || cls == &PyBool_Type || cls == &PyComplex_Type
        || cls == Py_TYPE(Py_None) || cls == &PyUnicode_Type || cls == &PyBytes_Type;
}

static int
is_container_type(PyTypeObject *cls)
{
    return cls == &PyList_Type || cls == &PyTuple_Type || cls == &PyDict_Type || cls == &PySet_Type || cls == &PyFrozenSet_Type;
}

/* Abstraction._nested(item, budget, depth). */
static PyObject *
nested_text(Walk *k, PyObject *item, Py_ssize_t depth)
{
    PyTypeObject *cls = Py_TYPE(item);
    if (cls == &PyUnicode_Type) {
        k->budget--;
        record_scalar(k, item);
        return string_text(k, item);
    }
    if (cls == &PyLong_Type || cls == &PyBool_Type || item == Py_None) {
        k->budget--;
        record_scalar(k, item);
        return scalar_text(k, item);
    }
    PyObject *known = PyDict_GetItemWithError(T(k->w, T_KINDS), (PyObject *)cls);
    if (known == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (known != NULL && PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == 2 && PyTuple_GET_ITEM(known, 0) == T(k->w, T_OBJECT)) {
        k->budget--;
        record_class(k, cls);
        return name_of(k, cls);
    }
    Py_INCREF(cls);  /* the item's class may be reassigned while Python walks it */
    PyObject *text = walk_text(k, item, cls, depth + 1), *result = NULL;
    if (text == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (is_scalar_type(cls) || is_container_type(cls)) {
        result = text != NULL ? Py_NewRef(text) : name_of(k, cls);
        goto done;
    }
    PyObject *name = name_of(k, cls);
    if (name != NULL) {
        PyObject *pieces[4] = {name, TEXT_OPEN, text, TEXT_CLOSE};
        result = text == NULL ? Py_NewRef(name) : concat(pieces, 4, NULL);
        Py_DECREF(name);
    }
done:
    Py_XDECREF(text);
    Py_DECREF(cls);
    return result;
}

/* "…+n": what the budget left out. */
static int
append_rest(PyObject *parts, Py_ssize_t rest)
{
    PyObject *text = PyUnicode_FromFormat("%U%zd", ELLIPSIS_PLUS, rest);
    if (text == NULL) {
        return -1;
    }
    int failed = PyList_Append(parts, text);
    Py_DECREF(text);
    return failed;
}

/* open + ", ".join(parts) + close. */
static PyObject *
joined(PyObject *parts, PyObject *open, PyObject *close)
{
    PyObject *inner = concat(PySequence_Fast_ITEMS(parts), PyList_GET_SIZE(parts), COMMA_SPACE);
    if (inner == NULL) {
        return NULL;
    }
    PyObject *pieces[3] = {open, inner, close};
    PyObject *text = concat(pieces, 3, NULL);
    Py_DECREF(inner);
    return text;
}

/* Whether `key` names a secret: Abstraction.redacts, through its cache. */
static int
redacts(Walk *k, PyObject *key)
{
    PyObject *found = cached(k, T_REDACTED, T_REDACTS, key);
    if (found == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(found);  /* a bool: Python's own answer */
    Py_DECREF(found);
    return truth;
}

/* One "key: value" of a dict (Abstraction._builtin). */
static PyObject *
dict_item_text(Walk *k, PyObject *key, PyObject *item, Py_ssize_t depth)
{
    PyTypeObject *key_cls = Py_TYPE(key);
    Py_INCREF(key_cls);
    PyObject *key_text = walk_text(k, key, key_cls, depth + 1), *item_text = NULL, *result = NULL;
    if (key_text == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (key_text == NULL || PyUnicode_GET_LENGTH(key_text) == 0) {  /* `or type_name(type(key))` */
        Py_XDECREF(key_text);
        key_text = name_of(k, key_cls);
        if (key_text == NULL) {
            goto done;
        }
    }
    int secret = key_cls == &PyUnicode_Type ? redacts(k, key) : 0;
    if (secret < 0) {
        goto done;
    }
    if (secret) {
        record_unfit(k);
    }
    item_text = secret ? PyObject_CallOneArg(T(k->w, T_SECRET), item) : nested_text(k, item, depth);
    if (item_text != NULL) {
        PyObject *pieces[3] = {key_text, TEXT_COLON, item_text};
        result = concat(pieces, 3, NULL);
    }
done:
    Py_XDECREF(key_text);
    Py_XDECREF(item_text);
    Py_DECREF(key_cls);
    return result;
}

/* Abstraction._builtin of an exact dict: items in insertion order, as long as the budget lasts. */
static PyObject *
dict_text(Walk *k, PyObject *value, Py_ssize_t depth, Py_ssize_t *shown)
{
    PyObject *parts = PyList_New(0), *result = NULL;
    if (parts == NULL) {
        return NULL;
    }
    Py_ssize_t pos = 0, size = PyDict_GET_SIZE(value);
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        if (k->budget <= 0) {
            if (shown != NULL) {
                *shown = PyList_GET_SIZE(parts);
            }
            if (append_rest(parts, PyDict_GET_SIZE(value) - PyList_GET_SIZE(parts)) < 0) {
                goto done;
            }
            break;
        }
        Py_INCREF(key);  /* Python walks may let another thread change the dict */
        Py_INCREF(item);
        PyObject *text = dict_item_text(k, key, item, depth);
        Py_DECREF(key);
        Py_DECREF(item);
        if (text == NULL) {
            goto done;
        }
        int failed = PyList_Append(parts, text);
        Py_DECREF(text);
        if (failed) {
            goto done;
        }
        if (PyDict_GET_SIZE(value) != size) {  /* as dict.items() would say */
            PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
            goto done;
        }
        if (shown != NULL) {
            *shown = PyList_GET_SIZE(parts);
        }
    }
    result = joined(parts, TEXT_OPEN_BRACE, TEXT_CLOSE_BRACE);
done:
    Py_DECREF(parts);
    return result;
}

/* Abstraction._builtin of a list or tuple (a subclass's instance read as its base's). */
static PyObject *
sequence_text(Walk *k, PyObject *value, Py_ssize_t depth, int is_list, Py_ssize_t *shown)
{
    Py_ssize_t size = is_list ? PyList_GET_SIZE(value) : PyTuple_GET_SIZE(value);
    PyObject *parts = PyList_New(0), *result = NULL;
    if (parts == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < (is_list ? PyList_GET_SIZE(value) : size); i++) {  /* a list iterator reads the length as it goes */
        if (k->budget <= 0) {
            if (shown != NULL) {
                *shown = PyList_GET_SIZE(parts);
            }
            if (append_rest(parts, size - PyList_GET_SIZE(parts)) < 0) {
                goto done;
            }
            break;
        }
        PyObject *item = Py_NewRef(is_list ? PyList_GET_ITEM(value, i) : PyTuple_GET_ITEM(value, i));
        PyObject *text = nested_text(k, item, depth);
        Py_DECREF(item);
        if (text == NULL) {
            goto done;
        }
        int failed = PyList_Append(parts, text);
        Py_DECREF(text);
        if (failed) {
            goto done;
        }
        if (shown != NULL) {
            *shown = PyList_GET_SIZE(parts);
        }
    }
    if (is_list) {
        result = joined(parts, TEXT_OPEN_BRACKET, TEXT_CLOSE_BRACKET);
    }
    else {
        result = joined(parts, TEXT_OPEN, PyList_GET_SIZE(parts) == 1 ? TEXT_CLOSE_ONE : TEXT_CLOSE);
    }
done:
    Py_DECREF(parts);
    return result;
}

/* Whether the call failed with an Exception (which the Python walk catches), not a BaseException it lets through. */
static int
caught(void)
{
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

/* The names and items of an instance's dictionary and set slots, as Abstraction._fields reads them: 0 with both
 * set (possibly empty), -1 on an error. */
static int
read_fields(Walk *k, PyObject *value, PyTypeObject *cls, PyObject **names, PyObject **items)
{
    *names = *items = NULL;
    PyObject *layout = PyDict_GetItemWithError(T(k->w, T_LAYOUTS), (PyObject *)cls), *name_list = NULL;
    if (layout != NULL) {
        Py_INCREF(layout);
    }
    else if (PyErr_Occurred() || (layout = PyObject_CallOneArg(T(k->w, T_LAYOUT), (PyObject *)cls)) == NULL) {
        return -1;
    }
    if (!PyTuple_CheckExact(layout) || PyTuple_GET_SIZE(layout) != 2 || !PyTuple_CheckExact(PyTuple_GET_ITEM(layout, 1))) {
        PyErr_SetString(PyExc_TypeError, "a layout must be (holder, slots)");
        goto fail;
    }
    PyObject *holder = PyTuple_GET_ITEM(layout, 0), *slots = PyTuple_GET_ITEM(layout, 1);
    name_list = PyList_New(0);
    *items = PyList_New(0);
    if (name_list == NULL || *items == NULL) {
        goto fail;
    }
    PyObject *inline_names[MAX_INLINE_FIELDS], *inline_items[MAX_INLINE_FIELDS];
    Py_ssize_t count = holder != Py_None ? histeg_inline_attributes(value, inline_names, inline_items, MAX_INLINE_FIELDS) : -1;
    if (count > 0) {  /* read where they are: no __dict__ made */
        PyObject *keys = PyList_New(count), *values = PyList_New(count);
        if (keys == NULL || values == NULL) {
            Py_XDECREF(keys);
            Py_XDECREF(values);
            goto fail;
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            PyList_SET_ITEM(keys, i, Py_NewRef(inline_names[i]));
            PyList_SET_ITEM(values, i, Py_NewRef(inline_items[i]));
        }
        Py_SETREF(name_list, keys);
        Py_SETREF(*items, values);
    }
    else if (holder != Py_None && count < 0) {
        PyObject *namespace = PyObject_CallOneArg(holder, value);
        if (namespace == NULL && !caught()) {
            goto fail;
        }
        if (namespace != NULL && PyDict_CheckExact(namespace) && PyDict_GET_SIZE(namespace)) {
            PyObject *keys = PyDict_Keys(namespace), *values = PyDict_Values(namespace);
            int failed = keys == NULL || values == NULL;
            if (!failed) {
                Py_SETREF(name_list, keys);
                Py_SETREF(*items, values);
            }
            else {
                Py_XDECREF(keys);
                Py_XDECREF(values);
            }
            Py_DECREF(namespace);
            if (failed) {
                goto fail;
            }
        }
        else {
            Py_XDECREF(namespace);
        }
    }
    for (Py_ssize_t s = 0; s < PyTuple_GET_SIZE(slots); s++) {
        PyObject *slot = PyTuple_GET_ITEM(slots, s);
        if (!PyTuple_CheckExact(slot) || PyTuple_GET_SIZE(slot) < 2) {
            PyErr_SetString(PyExc_TypeError, "a slot must be (name, getter, member)");
            goto fail;
        }
        PyObject *item = histeg_slot_value(slot, value);
        if (item == NULL) {
            if (!PyErr_Occurred() || caught()) {
                continue;  /* an unset slot */
            }
            goto fail;
        }
        int failed = PyList_Append(*items, item) < 0 || PyList_Append(name_list, PyTuple_GET_ITEM(slot, 0)) < 0;
        Py_DECREF(item);
        if (failed) {
            goto fail;
        }
    }
    *names = PyList_AsTuple(name_list);
    Py_DECREF(name_list);
    Py_DECREF(layout);
    return *names == NULL ? -1 : 0;
fail:
    Py_XDECREF(layout);
    Py_XDECREF(name_list);
    Py_CLEAR(*items);
    return -1;
}

/* The plan for a set of field names: the cache's when every name is an exact string, else Abstraction._plan's. */
static PyObject *
plan_of(Walk *k, PyObject *names)
{
    int plain = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        plain &= PyUnicode_CheckExact(PyTuple_GET_ITEM(names, i));
    }
    return plain ? cached(k, T_PLANS, T_PLAN, names) : PyObject_CallOneArg(T(k->w, T_PLAN), names);
}

/* label + (text or "None"), as an f-string shows a missing text. */
static PyObject *
labelled(PyObject *label, PyObject *text)
{
    return PyUnicode_Concat(label, text != NULL ? text : TEXT_NONE);
}

/* One field of Abstraction._fields, by its plan step. */
static PyObject *
field_text(Walk *k, PyObject *item, PyObject *label, int secret, Py_ssize_t depth)
{
    if (secret) {
        PyObject *digest = PyObject_CallOneArg(T(k->w, T_SECRET), item);
        PyObject *text = digest ? PyUnicode_Concat(label, digest) : NULL;
        Py_XDECREF(digest);
        return text;
    }
    PyTypeObject *cls = Py_TYPE(item);
    if (cls == &PyUnicode_Type) {
        k->budget--;
        PyObject *shown = string_text(k, item);
        PyObject *text = shown ? PyUnicode_Concat(label, shown) : NULL;
        Py_XDECREF(shown);
        return text;
    }
    if (cls == &PyBool_Type || item == Py_None) {
        k->budget--;
        return PyUnicode_Concat(label, item == Py_True ? TEXT_TRUE : item == Py_False ? TEXT_FALSE : TEXT_NONE);
    }
    Py_INCREF(cls);
    PyObject *result = NULL, *inner = NULL, *name = NULL;
    PyObject *kind_base = kind_of(k, cls);
    if (kind_base == NULL) {
        goto done;
    }
    PyObject *kind = PyTuple_GET_ITEM(kind_base, 0);
    int shown = PySet_Contains(T(k->w, T_SHOWN_IN_FIELDS), kind);
    if (shown < 0) {
        goto done;
    }
    if (kind == T(k->w, T_STANDARD) || kind == T(k->w, T_CLASS)) {  /* its text alone would not say what it is (1.5: a float or
                                                                        * a Decimal? pkg.Node: an instance or the class?) */
        inner = walk_text(k, item, cls, depth + 1);
        if ((inner == NULL && PyErr_Occurred()) || (name = name_of(k, cls)) == NULL) {
            goto done;
        }
        PyObject *pieces[5] = {label, name, TEXT_OPEN, inner != NULL ? inner : TEXT_NONE, TEXT_CLOSE};
        result = concat(pieces, 5, NULL);
    }
    else if (shown || PyTuple_GET_ITEM(kind_base, 1) == (PyObject *)cls) {
        inner = walk_text(k, item, cls, depth + 1);
        if (inner != NULL || !PyErr_Occurred()) {
            result = labelled(label, inner);
        }
    }
    else {
        k->budget--;
        name = name_of(k, cls);
        result = name ? PyUnicode_Concat(label, name) : NULL;
    }
done:
    Py_XDECREF(kind_base);
    Py_XDECREF(inner);
    Py_XDECREF(name);
    Py_DECREF(cls);
    return result;
}

/* Abstraction._fields: a shallow view of the instance dictionary and slots; NULL without an error for none. */
static PyObject *
fields_text(Walk *k, PyObject *value, PyTypeObject *cls, Py_ssize_t depth)
{
    PyObject *names, *items, *plan = NULL, *shown = NULL, *result = NULL;
    if (read_fields(k, value, cls, &names, &items) < 0) {
        return NULL;
    }
    if (PyTuple_GET_SIZE(names) == 0) {
        goto done;
    }
    plan = plan_of(k, names);
    if (plan == NULL || !PyTuple_CheckExact(plan) || (shown = PyList_New(0)) == NULL) {
        if (plan != NULL && !PyTuple_CheckExact(plan)) {
            PyErr_SetString(PyExc_TypeError, "a plan must be a tuple");
        }
        goto done;
    }
    Py_ssize_t steps = PyTuple_GET_SIZE(plan);
    for (Py_ssize_t s = 0; s < steps; s++) {
        if (k->budget <= 0) {
            if (append_rest(shown, steps - PyList_GET_SIZE(shown)) < 0) {
                goto done;
            }
            break;
        }
        PyObject *step = PyTuple_GET_ITEM(plan, s);
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 3) {
            PyErr_SetString(PyExc_TypeError, "a plan step must be (index, label, secret)");
            goto done;
        }
        Py_ssize_t index = PyLong_AsSsize_t(PyTuple_GET_ITEM(step, 0));
        if (index == -1 && PyErr_Occurred()) {
            goto done;
        }
        if (index < 0 || index >= PyList_GET_SIZE(items)) {
            PyErr_SetString(PyExc_IndexError, "a plan step past the fields");
            goto done;
        }
        int secret = PyObject_IsTrue(PyTuple_GET_ITEM(step, 2));
        if (secret < 0) {
            goto done;
        }
        PyObject *text = field_text(k, PyList_GET_ITEM(items, index), PyTuple_GET_ITEM(step, 1), secret, depth);
        if (text == NULL) {
            goto done;
        }
        int failed = PyList_Append(shown, text);
        Py_DECREF(text);
        if (failed) {
            goto done;
        }
    }
    result = joined(shown, TEXT_OPEN_BRACE, TEXT_CLOSE_BRACE);
done:
    Py_DECREF(names);
    Py_DECREF(items);
    Py_XDECREF(plan);
    Py_XDECREF(shown);
    return result;
}

/* f"{_func_module(value)}:{_func_qualname(value)}" of a function whose module is a string or None and whose qualified
 * name is a string (anything else is formatted by its own code: Python walks it). 1 and *text (NULL on an error), or 0. */
static int
function_text(PyObject *value, PyObject **text)
{
    PyFunctionObject *function = (PyFunctionObject *)value;
    PyObject *module = function->func_module != NULL ? function->func_module : Py_None;
    if ((module != Py_None && !PyUnicode_CheckExact(module)) || !PyUnicode_CheckExact(function->func_qualname)) {
        return 0;
    }
    *text = module == Py_None ? PyUnicode_FromFormat("None:%U", function->func_qualname)
                              : PyUnicode_FromFormat("%U:%U", module, function->func_qualname);
    return 1;
}

/* A bound method: its owner's type name, followed by "." and its function's qualified name when that is a plain
 * function's string. 1 and *text (NULL on an error), or 0 where Python walks it. */
static int
bound_text(Walk *k, PyObject *value, PyObject **text)
{
    PyObject *function = PyMethod_GET_FUNCTION(value);
    if (Py_IS_TYPE(function, &PyFunction_Type) && !PyUnicode_CheckExact(((PyFunctionObject *)function)->func_qualname)) {
        return 0;
    }
    PyObject *owner = name_of(k, Py_TYPE(PyMethod_GET_SELF(value)));
    if (owner == NULL || !Py_IS_TYPE(function, &PyFunction_Type)) {
        *text = owner;
        return 1;
    }
    *text = PyUnicode_FromFormat("%U.%U", owner, ((PyFunctionObject *)function)->func_qualname);
    Py_DECREF(owner);
    return 1;
}

/* A builtin list's, tuple's or dict's subclass (`shape` its base) or an exception (`shape` NULL): its content (a
 * subclass's by its base's own storage, an exception's args), then at the top its fields, joined by a space, as
 * Abstraction._walk shows them. NULL without an error for none. */
static PyObject *
compound_text(Walk *k, PyObject *value, PyTypeObject *cls, PyTypeObject *shape, Py_ssize_t depth)
{
    if (shape != NULL && (depth >= MAX_DEPTH || k->budget <= 0)) {
        Py_ssize_t size = shape == &PyDict_Type ? PyDict_GET_SIZE(value) : Py_SIZE(value);
        return PyUnicode_FromFormat("<%s len=%zd>", shape->tp_name, size);
    }
    PyObject *parts = PyList_New(0), *content = NULL, *fields = NULL, *result = NULL;
    if (parts == NULL) {
        return NULL;
    }
    if (shape != NULL) {
        content = shape == &PyDict_Type ? dict_text(k, value, depth, NULL) : sequence_text(k, value, depth, shape == &PyList_Type, NULL);
    }
    else {
        PyObject *args = Py_NewRef(((PyBaseExceptionObject *)value)->args);  /* the walk may run a secret's digest */
        content = walk_text(k, args, &PyTuple_Type, depth + 1);
        Py_DECREF(args);
    }
    if ((content == NULL && PyErr_Occurred()) || (content != NULL && PyList_Append(parts, content) < 0)) {
        goto done;
    }
    if (depth == 0) {
        fields = fields_text(k, value, cls, depth);
        if ((fields == NULL && PyErr_Occurred()) || (fields != NULL && PyList_Append(parts, fields) < 0)) {
            goto done;
        }
    }
    if (PyList_GET_SIZE(parts) > 0) {
        result = PyUnicode_Join(SPACE, parts);
    }
done:
    Py_DECREF(parts);
    Py_XDECREF(content);
    Py_XDECREF(fields);
    return result;
}

/* -- Texts of unchanged containers (_textmemo.h) ----------------------------
 * While a container is walked, the nodes its text is read from go to the walk's shape: the walk itself says which it
 * reads (record_*), so the shape follows what the walk does and nothing here repeats its rules. Anything else the
 * walk shows (through Python, a secret, a list subclass's content, a long string) leaves the shape unfit to keep. */

/* The text of a list, tuple or dict that shows its items at `depth` (`cls` its class, `shape` the builtin it is or
 * derives from): from the memo when a walk from this budget would read the same nodes, else walked, its shape
 * recorded (and added to the shape of the container it is in) and kept. An exact container, or below the top a tuple
 * subclass (a lexer's token type, which shows its items alone there: they are its storage and never change); a list
 * subclass's items are walked every time. */
static PyObject *
container_text(Walk *k, PyObject *value, PyTypeObject *cls, PyTypeObject *shape, Py_ssize_t depth)
{
    if (cls != shape && !(shape == &PyTuple_Type && depth > 0)) {
        record_unfit(k);
        return shape == &PyDict_Type ? dict_text(k, value, depth, NULL) : sequence_text(k, value, depth, shape == &PyList_Type, NULL);
    }
    TextMemo *memo = &k->w->memo;
    Py_ssize_t budget = k->budget;
    TextEntry *entry = text_memo_find(memo, value, depth, budget);
    if (entry != NULL) {
        if (k->shape != NULL && !k->unfit && text_shape_add(k->shape, entry->shape.nodes, entry->shape.count) < 0) {
            PyErr_Clear();
            k->unfit = 1;
        }
        k->budget -= entry->consumed;
        return Py_NewRef(entry->text);
    }
    TextShape own = {NULL, 0, 0}, *outer = k->shape;
    int outer_unfit = k->unfit;
    k->shape = &own;
    k->unfit = 0;
    Py_ssize_t shown = 0;
    record(k, NULL, cls, text_container_length(value), 0);
    PyObject *text = shape == &PyDict_Type ? dict_text(k, value, depth, &shown) : sequence_text(k, value, depth, shape == &PyList_Type, &shown);
    int fit = !k->unfit && own.count > 0;
    k->shape = outer;
    k->unfit = outer_unfit || !fit;
    if (fit) {
        own.nodes[0].shown = shown;
        if (outer != NULL && !k->unfit && text_shape_add(outer, own.nodes, own.count) < 0) {
            PyErr_Clear();
            k->unfit = 1;
        }
        if (text != NULL && text_memo_put(memo, value, depth, budget, budget - k->budget, text, &own) < 0) {
            PyErr_Clear();  /* walked again next time */
        }
    }
    text_shape_free(&own);
    return text;
}

/* Abstraction._text: NULL without an error stands for None. */
static PyObject *
walk_text(Walk *k, PyObject *value, PyTypeObject *cls, Py_ssize_t depth)
{
    PyObject *kind_base = kind_of(k, cls);
    if (kind_base == NULL) {
        return NULL;
    }
    PyObject *kind = PyTuple_GET_ITEM(kind_base, 0), *base = PyTuple_GET_ITEM(kind_base, 1), *text;
    if (kind == T(k->w, T_STR) && cls == &PyUnicode_Type) {
        k->budget--;
        record_scalar(k, value);
        text = string_text(k, value);
    }
    else if (kind == T(k->w, T_SCALAR) && (cls == &PyLong_Type || cls == &PyFloat_Type || cls == &PyBool_Type || value == Py_None)) {
        k->budget--;
        record_scalar(k, value);
        text = scalar_text(k, value);
    }
    else if (kind == T(k->w, T_OBJECT)) {
        k->budget--;
        if (depth == 0) {
            record_unfit(k);
            text = fields_text(k, value, cls, depth);
        }
        else {
            record_class(k, cls);  /* shown by its class's name where it is a dict's key */
            text = NULL;
        }
    }
    else if (kind == T(k->w, T_SUBCLASS)
             && ((base == (PyObject *)cls && (cls == &PyList_Type || cls == &PyTuple_Type || cls == &PyDict_Type))
                 || (depth > 0 && (base == (PyObject *)&PyList_Type || base == (PyObject *)&PyTuple_Type)))) {
        /* an exact container, or below the top a list or tuple subclass (a lexer's token type), which shows its content
         * alone there */
        PyTypeObject *shape = (PyTypeObject *)base;
        k->budget--;
        if (depth >= MAX_DEPTH || k->budget <= 0) {
            Py_ssize_t size = shape == &PyDict_Type ? PyDict_GET_SIZE(value) : Py_SIZE(value);
            record_length(k, value, shape);
            text = PyUnicode_FromFormat("<%s len=%zd>", shape->tp_name, size);
        }
        else {
            text = container_text(k, value, cls, shape, depth);
        }
    }
    else if (kind == T(k->w, T_CLASS) && PyType_Check(value)) {
        k->budget--;
        record_unfit(k);
        text = name_of(k, (PyTypeObject *)value);
    }
    else if (kind == T(k->w, T_FUNCTION) && cls == &PyFunction_Type && function_text(value, &text)) {
        k->budget--;
        record_unfit(k);
    }
    else if (kind == T(k->w, T_BOUND) && cls == &PyMethod_Type && bound_text(k, value, &text)) {
        k->budget--;
        record_unfit(k);
    }
    else if ((kind == T(k->w, T_SUBCLASS) && (base == (PyObject *)&PyList_Type || base == (PyObject *)&PyTuple_Type || base == (PyObject *)&PyDict_Type))
             || (kind == T(k->w, T_EXCEPTION) && base == Py_None && PyExceptionInstance_Check(value)
                 && PyTuple_CheckExact(((PyBaseExceptionObject *)value)->args))) {
        k->budget--;
        record_unfit(k);
        text = compound_text(k, value, cls, kind == T(k->w, T_EXCEPTION) ? NULL : (PyTypeObject *)base, depth);
    }
    else {
        record_unfit(k);
        text = python_walk(k, value, cls, depth);
        if (text == Py_None) {
            Py_CLEAR(text);
        }
    }
    Py_DECREF(kind_base);
    return text;
}

static PyObject *
walker_text(WalkerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (self->tables == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Walker has no tables");
        return NULL;
    }
    if (nargs != 4 || !PyType_Check(args[1]) || !PyList_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "text(value, cls, budget: list, depth)");
        return NULL;
    }
    Py_ssize_t depth = PyLong_AsSsize_t(args[3]);
    if (depth == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Walk k = {self, args[2], 0, NULL, 0};
    if (sync_in(&k) < 0) {
        return NULL;
    }
    PyObject *cls = Py_NewRef(args[1]);
    PyObject *text = walk_text(&k, args[0], (PyTypeObject *)cls, depth);
    Py_DECREF(cls);
    if (text == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (sync_out(&k) < 0) {
        Py_XDECREF(text);
        return NULL;
    }
    return text != NULL ? text : Py_NewRef(Py_None);
}

static int
walker_init(WalkerObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *tables;
    if (!PyArg_ParseTuple(args, "O!:Walker", &PyTuple_Type, &tables)) {
        return -1;
    }
    if (PyTuple_GET_SIZE(tables) != T_COUNT) {
        PyErr_Format(PyExc_TypeError, "Walker takes %d tables, not %zd", T_COUNT, PyTuple_GET_SIZE(tables));
        return -1;
    }
    for (int t = T_KINDS; t <= T_REDACTED; t++) {
        if (!PyDict_CheckExact(PyTuple_GET_ITEM(tables, t))) {
            PyErr_Format(PyExc_TypeError, "Walker's table %d must be a dict", t);
            return -1;
        }
    }
    if (!PyFrozenSet_CheckExact(PyTuple_GET_ITEM(tables, T_SHOWN_IN_FIELDS))) {
        PyErr_SetString(PyExc_TypeError, "Walker's kinds shown in fields must be a frozenset");
        return -1;
    }
    text_memo_clear(&self->memo);  /* its texts were read through the tables replaced */
    Py_XSETREF(self->tables, Py_NewRef(tables));
    return 0;
}

static int
walker_traverse(WalkerObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->tables);
    return 0;
}

static int
walker_clear(WalkerObject *self)
{
    text_memo_clear(&self->memo);
    Py_CLEAR(self->tables);
    return 0;
}

static void
walker_dealloc(WalkerObject *self)
{
    PyObject_GC_UnTrack(self);
    walker_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* inline_namespace(obj): a new dict of the attributes obj keeps as inline values, as its __dict__ would show them,
 * without making that __dict__; None when it has no such values (read __dict__ then). */
static PyObject *
inline_namespace(PyObject *Py_UNUSED(module), PyObject *obj)
{
    PyObject *names[MAX_INLINE_FIELDS], *values[MAX_INLINE_FIELDS];
    Py_ssize_t count = histeg_inline_attributes(obj, names, values, MAX_INLINE_FIELDS);
    if (count < 0) {
        Py_RETURN_NONE;
    }
    PyObject *namespace = PyDict_New();
    for (Py_ssize_t i = 0; namespace != NULL && i < count; i++) {
        if (PyDict_SetItem(namespace, names[i], values[i]) < 0) {
            Py_CLEAR(namespace);
        }
    }
    return namespace;
}

static PyMethodDef module_functions[] = {
    {"inline_namespace", inline_namespace, METH_O,
     "inline_namespace(obj): its attributes as its __dict__ would show them, without making it; None if it has a dict."},
    {NULL, NULL, 0, NULL},
};

static PyObject *
walker_remembered(WalkerObject *self, void *Py_UNUSED(closure))
{
    Py_ssize_t count = 0;
    for (Py_ssize_t s = 0; self->memo.slots != NULL && s < TEXT_MEMO_SLOTS; s++) {
        count += self->memo.slots[s].root != NULL;
    }
    return PyLong_FromSsize_t(count);
}

static PyGetSetDef walker_getset[] = {
    {"remembered", (getter)walker_remembered, NULL, "how many containers' texts the memo keeps", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef walker_methods[] = {
    {"text", (PyCFunction)(void (*)(void))walker_text, METH_FASTCALL,
     "text(value, cls, budget, depth): Abstraction._walk's answer, walked in C where the shape allows."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.tracing._walk.Walker",
    .tp_basicsize = sizeof(WalkerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The structural walk of values, over an Abstraction's tables.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)walker_init,
    .tp_traverse = (traverseproc)walker_traverse,
    .tp_clear = (inquiry)walker_clear,
    .tp_dealloc = (destructor)walker_dealloc,
    .tp_methods = walker_methods,
    .tp_getset = walker_getset,
};

static struct PyModuleDef walk_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "histeg.tracing._walk",
    .m_doc = "The structural walk of values in C (Abstraction._walk is its reference).",
    .m_methods = module_functions,
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__walk(void)
{
    if (PyType_Ready(&WalkerType) < 0) {
        return NULL;
    }
    ELLIPSIS_PLUS = PyUnicode_FromString("\xe2\x80\xa6+");
    COMMA_SPACE = PyUnicode_FromString(", ");
    SPACE = PyUnicode_FromString(" ");
    TEXT_TRUE = PyUnicode_FromString("True");
    TEXT_FALSE = PyUnicode_FromString("False");
    TEXT_NONE = PyUnicode_FromString("None");
    TEXT_COLON = PyUnicode_FromString(": ");
    TEXT_OPEN = PyUnicode_FromString("(");
    TEXT_CLOSE = PyUnicode_FromString(")");
    TEXT_CLOSE_ONE = PyUnicode_FromString(",)");
    TEXT_OPEN_BRACKET = PyUnicode_FromString("[");
    TEXT_CLOSE_BRACKET = PyUnicode_FromString("]");
    TEXT_OPEN_BRACE = PyUnicode_FromString("{");
    TEXT_CLOSE_BRACE = PyUnicode_FromString("}");
    if (!ELLIPSIS_PLUS || !COMMA_SPACE || !SPACE || !TEXT_TRUE || !TEXT_FALSE || !TEXT_NONE || !TEXT_COLON || !TEXT_OPEN || !TEXT_CLOSE
        || !TEXT_CLOSE_ONE || !TEXT_OPEN_BRACKET || !TEXT_CLOSE_BRACKET || !TEXT_OPEN_BRACE || !TEXT_CLOSE_BRACE) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&walk_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Walker", (PyObject *)&WalkerType) < 0
        || PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
