/* The id of a program's object or of a tuple, found again by what its key is made of (see the header). */
#include "_objectmemo.h"

#include <string.h>

static inline int
mode_of(const ObjectMemoKey *key, Py_ssize_t k)
{
    return key->modes != NULL ? key->modes[k] : MEMO_BY_IDENTITY;
}

static inline PyObject *
name_of(const ObjectMemoKey *key, Py_ssize_t k)
{
    return key->names != NULL ? key->names[k] : NULL;
}

/* What an entry keeps of part k: the value itself (by identity), else its class. */
static inline PyObject *
ref_of(const ObjectMemoKey *key, Py_ssize_t k)
{
    PyObject *value = key->values[k];
    return mode_of(key, k) == MEMO_BY_IDENTITY ? value : (PyObject *)Py_TYPE(value);
}

static inline Py_ssize_t
size_of(const ObjectMemoKey *key, Py_ssize_t k)
{
    return mode_of(key, k) == MEMO_CONTAINER ? Py_SIZE(key->values[k]) : -1;
}

static uint64_t
hash_of(const ObjectMemoKey *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key->cls ^ (uint64_t)key->n;
    for (Py_ssize_t k = 0; k < key->n; k++) {
        uint64_t part = (uint64_t)(uintptr_t)ref_of(key, k) ^ ((uint64_t)(uintptr_t)name_of(key, k) << 1)
            ^ ((uint64_t)size_of(key, k) << 32) ^ (uint64_t)mode_of(key, k);
        h = (h ^ part) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

int
object_memo_get(const ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long *id)
{
    if (memo->entries == NULL || key->n > OBJECT_MEMO_PARTS) {
        return 0;
    }
    uint64_t h = hash_of(key);
    const ObjectMemoEntry *entry = &memo->entries[h & (OBJECT_MEMO_SLOTS - 1)];
    if (entry->cls != key->cls || entry->hash != h || entry->n != key->n) {
        return 0;
    }
    for (Py_ssize_t k = 0; k < key->n; k++) {
        if (entry->modes[k] != mode_of(key, k) || entry->names[k] != name_of(key, k) || entry->refs[k] != ref_of(key, k)
            || entry->sizes[k] != size_of(key, k)) {
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
        Py_XDECREF(entry->refs[k]);
    }
    PyMem_Free(entry->names);
}

int
object_memo_put(ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long id)
{
    Py_ssize_t n = key->n;
    if (n > OBJECT_MEMO_PARTS) {
        return 0;
    }
    if (memo->entries == NULL && (memo->entries = PyMem_Calloc(OBJECT_MEMO_SLOTS, sizeof(ObjectMemoEntry))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t size = (size_t)(n ? n : 1);
    char *block = PyMem_Malloc(size * (2 * sizeof(PyObject *) + sizeof(Py_ssize_t) + 1));
    if (block == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    ObjectMemoEntry entry = {(PyTypeObject *)Py_NewRef((PyObject *)key->cls), n, hash_of(key), id, (PyObject **)block,
                             (PyObject **)block + size, (Py_ssize_t *)((PyObject **)block + 2 * size), NULL};
    entry.modes = (uint8_t *)(entry.sizes + size);
    for (Py_ssize_t k = 0; k < n; k++) {
        entry.names[k] = Py_XNewRef(name_of(key, k));
        entry.refs[k] = Py_NewRef(ref_of(key, k));
        entry.sizes[k] = size_of(key, k);
        entry.modes[k] = (uint8_t)mode_of(key, k);
    }
    ObjectMemoEntry *slot = &memo->entries[entry.hash & (OBJECT_MEMO_SLOTS - 1)], old = *slot;
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
            Py_VISIT(entry->refs[k]);
        }
    }
    return 0;
}
