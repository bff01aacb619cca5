/* _keymemo.c: the ids of keyed values, found again by a digest of their key instead of the key itself. */
#ifndef HISTEG_KEYMEMO_H
#define HISTEG_KEYMEMO_H

#include <Python.h>
#include <stdint.h>

/* A running 128-bit digest of a key's parts (two 64-bit lanes fed alike through different multipliers; a string's
 * lanes get CPython's hash of it and a hash of its data of our own). `usable` drops to 0 at a part it cannot digest
 * (a value compared otherwise than by identity, an int past 64 bits): the key is then made and looked up as before. */
typedef struct {
    uint64_t a, b;
    Py_ssize_t count;
    int usable;
} KeyDigest;

void key_digest_start(KeyDigest *d, uint64_t shape);
void key_digest_add(KeyDigest *d, PyObject *part);
/* Adds a tuple of `n` parts taken by identity (names the program keeps interned): a part digested so is found again
 * only through the same objects, never through an equal one that is not the same (a miss, never a wrong id). */
void key_digest_add_same(KeyDigest *d, PyObject *const *parts, Py_ssize_t n);
/* Closes the digest (the number of parts added): 1 when usable. */
int key_digest_finish(KeyDigest *d);

/* Digest -> (id, key): open addressing, no removal; emptied when full, as ValueIds empties its own tables. Each entry
 * holds its key, so that no type or object whose address a digest took can be freed and its address reused. */
typedef struct {
    uint64_t a, b;
    unsigned long long id;
    PyObject *key;    /* strong; NULL: an empty slot */
} KeyMemoEntry;

typedef struct {
    KeyMemoEntry *entries;
    size_t cap, count;
} KeyMemo;

int key_memo_get(const KeyMemo *memo, const KeyDigest *d, unsigned long long *id);
/* Keeps `id` and a new reference to `key` under the digest; -1 (a MemoryError set) when it cannot grow. */
int key_memo_put(KeyMemo *memo, const KeyDigest *d, unsigned long long id, PyObject *key, size_t limit);
void key_memo_clear(KeyMemo *memo);

#endif
