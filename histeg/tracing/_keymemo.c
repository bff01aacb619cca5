/* The ids of keyed values, found again by a digest of their key.
 *
 * Why: a program's object shown by its fields gets its id from a key made of its fields, a tuple looked up in
 * ValueIds' table. Making that tuple (lists, tuples, their hashes and comparisons, then freeing them) was two
 * thirds of what recording values cost on a parser's suite. The same parts, fed to a 128-bit digest as the key
 * would be made of them, find the id again without making anything.
 *
 * Why it is safe: the digest takes a string or a small tuple by its content, an int by its value, and every other
 * part (a class, None, True, False, a sentinel) by identity, which is how the key compares it; anything else makes
 * the digest unusable. Two keys with equal digests are then equal unless both 128-bit lanes collide (for a table of
 * N keys, about N^2 / 2^129). Each entry holds its key, so no address it took is reused while it is kept. */
#include "_keymemo.h"
#include "_opentable.h"

#include <string.h>


/* CPython's hash of a string, read where the string keeps it once made. */
static inline Py_hash_t
string_hash(PyObject *text)
{
#if PY_VERSION_HEX < 0x030E0000
    Py_hash_t kept = ((PyASCIIObject *)text)->hash;
    if (kept != -1) {
        return kept;
    }
#endif
    return PyObject_Hash(text);
}

/* A hash of `n` bytes: one multiplication for up to 16 of them (overlapping reads cover every byte: for a given n the
 * two words tell the bytes apart, as in wyhash), a chain of them beyond. */
static uint64_t
data_hash(const unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t first = 0, last = 0;
    if (n <= 16) {
        if (n >= 8) {
            memcpy(&first, p, 8);
            memcpy(&last, p + n - 8, 8);
        }
        else if (n >= 4) {
            uint32_t low, high;
            memcpy(&low, p, 4);
            memcpy(&high, p + n - 4, 4);
            first = low;
            last = high;
        }
        else if (n > 0) {
            first = (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
        }
        return histeg_mum(first ^ seed ^ KEY_P0, last ^ (uint64_t)n ^ KEY_P1);
    }
    uint64_t h = histeg_mum(seed ^ KEY_P0, (uint64_t)n ^ KEY_P1);
    for (; n > 16; p += 8, n -= 8) {
        memcpy(&first, p, 8);
        h = histeg_mum(h ^ first ^ KEY_P2, KEY_P3);
    }
    memcpy(&first, p, 8);  /* the last 9 to 16 bytes, as above */
    memcpy(&last, p + n - 8, 8);
    return histeg_mum(h ^ first ^ KEY_P0, last ^ (uint64_t)n ^ KEY_P1);
}

void
key_digest_start(KeyDigest *d, uint64_t shape)
{
    d->a = KEY_P0 ^ shape;
    d->b = KEY_P1 ^ shape;
    d->count = 0;
    d->usable = 1;
}

void
key_digest_add(KeyDigest *d, PyObject *part)
{
    if (!d->usable) {
        return;
    }
    d->count++;
    PyTypeObject *cls = Py_TYPE(part);
    if (cls == &PyUnicode_Type) {
        Py_hash_t hash = string_hash(part);
        if (hash == -1) {
            PyErr_Clear();
            d->usable = 0;
            return;
        }
        uint64_t length = (uint64_t)PyUnicode_GET_LENGTH(part), kind = (uint64_t)PyUnicode_KIND(part);
        key_digest_feed(d, KEY_TAG_STR, (uint64_t)hash, data_hash(PyUnicode_DATA(part), (size_t)(length * kind), kind));
    }
    else if (cls == &PyLong_Type) {
        if (PyUnstable_Long_IsCompact((PyLongObject *)part)) {  /* every int a key holds: no call */
            key_digest_feed(d, KEY_TAG_INT, (uint64_t)PyUnstable_Long_CompactValue((PyLongObject *)part), (uint64_t)PyUnstable_Long_CompactValue((PyLongObject *)part));
            return;
        }
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(part, &overflow);
        if (overflow || (number == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            d->usable = 0;
            return;
        }
        key_digest_feed(d, KEY_TAG_INT, (uint64_t)number, (uint64_t)number);
    }
    else if (cls == &PyTuple_Type) {
        uint64_t length = (uint64_t)PyTuple_GET_SIZE(part);
        key_digest_feed(d, KEY_TAG_TUPLE, length, length);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(part); i++) {
            key_digest_add(d, PyTuple_GET_ITEM(part, i));
        }
    }
    else if (cls == &PyBytes_Type) {
        uint64_t length = (uint64_t)PyBytes_GET_SIZE(part);
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(part);
        key_digest_feed(d, KEY_TAG_BYTES, data_hash(data, (size_t)length, KEY_P2), data_hash(data, (size_t)length, KEY_P3));
    }
    else if (part == Py_None || part == Py_True || part == Py_False || cls->tp_richcompare == PyBaseObject_Type.tp_richcompare) {
        /* compared by identity: None, True and False (singletons), a class whose metaclass is type, a sentinel */
        key_digest_feed(d, KEY_TAG_SAME, (uint64_t)(uintptr_t)part, (uint64_t)(uintptr_t)part);
    }
    else {
        d->usable = 0;
    }
}

void
key_digest_add_same(KeyDigest *d, PyObject *const *parts, Py_ssize_t n)
{
    d->count++;
    key_digest_feed(d, KEY_TAG_TUPLE, (uint64_t)n, (uint64_t)n);
    for (Py_ssize_t i = 0; i < n; i++) {
        key_digest_feed(d, KEY_TAG_SAME, (uint64_t)(uintptr_t)parts[i], (uint64_t)(uintptr_t)parts[i]);
    }
}

int
key_digest_finish(KeyDigest *d)
{
    if (d->usable) {
        key_digest_feed(d, KEY_TAG_END, (uint64_t)d->count, (uint64_t)d->count);
    }
    return d->usable;
}

int
key_memo_get(const KeyMemo *memo, const KeyDigest *d, unsigned long long *id)
{
    if (memo->cap == 0) {
        return 0;
    }
    size_t mask = memo->cap - 1;
    for (size_t i = (size_t)d->a & mask;; i = (i + 1) & mask) {
        const KeyMemoEntry *e = &memo->entries[i];
        if (e->key == NULL) {
            return 0;
        }
        if (e->a == d->a && e->b == d->b) {
            *id = e->id;
            return 1;
        }
    }
}

static size_t
memo_home(const void *entry, size_t cap)
{
    return (size_t)((const KeyMemoEntry *)entry)->a & (cap - 1);
}

static int
memo_used(const void *entry)
{
    return ((const KeyMemoEntry *)entry)->key != NULL;
}

int
key_memo_put(KeyMemo *memo, const KeyDigest *d, unsigned long long id, PyObject *key, size_t limit)
{
    if (memo->count >= limit) {
        key_memo_clear(memo);
    }
    if (open_table_reserve((void **)&memo->entries, &memo->cap, memo->count, 1024, 3, sizeof(KeyMemoEntry), memo_home, memo_used) < 0) {
        return -1;  /* at most three quarters full */
    }
    KeyMemoEntry entry = {d->a, d->b, id, Py_NewRef(key)};
    open_table_place((char *)memo->entries, memo->cap, sizeof(KeyMemoEntry), &entry, memo_home, memo_used);
    memo->count++;
    return 0;
}

void
key_memo_clear(KeyMemo *memo)
{
    size_t cap;
    KeyMemoEntry *entries = open_table_take((void **)&memo->entries, &memo->cap, &memo->count, &cap);
    for (size_t i = 0; i < cap; i++) {
        Py_XDECREF(entries[i].key);
    }
    PyMem_Free(entries);
}
