/* The id of a program's object or of a tuple, found again by what its key is made of (see the header). */
#include "_objectmemo.h"

#include <stdint.h>
#include <string.h>

static inline int
by_identity(const ObjectMemoKey *key, Py_ssize_t k)
{
    return key->held || object_memo_by_value(key->values[k], key->unset);
}

/* The slot of a key: its class, names and, per value, the value or its class, mixed. */
static ObjectMemoEntry *
slot_of(const ObjectMemo *memo, const ObjectMemoKey *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key->cls ^ (uint64_t)key->n;
    for (Py_ssize_t k = 0; k < key->n; k++) {
        uintptr_t part = by_identity(key, k) ? (uintptr_t)key->values[k] : (uintptr_t)Py_TYPE(key->values[k]);
        h = (h ^ (uint64_t)part ^ ((uint64_t)(uintptr_t)(key->names != NULL ? key->names[k] : NULL) << 1)) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    h *= 0xBF58476D1CE4E5B9ull;
    return &memo->entries[(h >> 40) & (OBJECT_MEMO_SLOTS - 1)];
}

int
object_memo_get(const ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long *id)
{
    if (memo->entries == NULL || key->n > OBJECT_MEMO_FIELDS) {
        return 0;
    }
    const ObjectMemoEntry *entry = slot_of(memo, key);
    if (entry->cls != key->cls || entry->n != key->n) {
        return 0;
    }
    for (Py_ssize_t k = 0; k < key->n; k++) {
        PyObject *value = key->values[k];
        if (entry->names[k] != (key->names != NULL ? key->names[k] : NULL)
            || (by_identity(key, k) ? entry->values[k] != value : entry->classes[k] != Py_TYPE(value))) {
            return 0;
        }
    }
    *id = entry->id;
    return 1;
}

static void
entry_release(ObjectMemoEntry *entry)
{
    Py_XDECREF(entry->cls);
    for (Py_ssize_t k = 0; k < entry->n; k++) {
        Py_XDECREF(entry->names[k]);
        Py_XDECREF(entry->values[k]);
        Py_XDECREF(entry->classes[k]);
    }
}

int
object_memo_put(ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long id)
{
    if (key->n > OBJECT_MEMO_FIELDS) {
        return 0;
    }
    if (memo->entries == NULL && (memo->entries = PyMem_Calloc(OBJECT_MEMO_SLOTS, sizeof(ObjectMemoEntry))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    ObjectMemoEntry *slot = slot_of(memo, key), old = *slot;
    ObjectMemoEntry entry = {(PyTypeObject *)Py_NewRef((PyObject *)key->cls), key->n, {NULL}, {NULL}, {NULL}, id};
    for (Py_ssize_t k = 0; k < key->n; k++) {
        entry.names[k] = key->names != NULL ? Py_NewRef(key->names[k]) : NULL;
        if (by_identity(key, k)) {
            entry.values[k] = Py_NewRef(key->values[k]);
        }
        else {
            entry.classes[k] = (PyTypeObject *)Py_NewRef((PyObject *)Py_TYPE(key->values[k]));
        }
    }
    *slot = entry;
    memo->count += old.cls == NULL;
    if (old.cls != NULL) {
        entry_release(&old);  /* after the new entry is in: freeing what it held may run code that records values */
    }
    return 0;
}

void
object_memo_clear(ObjectMemo *memo)
{
    ObjectMemoEntry *entries = memo->entries;
    memo->entries = NULL;
    memo->count = 0;
    if (entries == NULL) {
        return;
    }
    for (size_t i = 0; i < OBJECT_MEMO_SLOTS; i++) {
        if (entries[i].cls != NULL) {
            entry_release(&entries[i]);
        }
    }
    PyMem_Free(entries);
}

int
object_memo_traverse(ObjectMemo *memo, visitproc visit, void *arg)
{
    if (memo->entries == NULL) {
        return 0;
    }
    for (size_t i = 0; i < OBJECT_MEMO_SLOTS; i++) {
        ObjectMemoEntry *entry = &memo->entries[i];
        if (entry->cls == NULL) {
            continue;
        }
        Py_VISIT(entry->cls);
        for (Py_ssize_t k = 0; k < entry->n; k++) {
            Py_VISIT(entry->values[k]);
            Py_VISIT(entry->classes[k]);
        }
    }
    return 0;
}
