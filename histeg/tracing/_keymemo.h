/* _keymemo.c: the ids of keyed values, found again by a digest of their key instead of the key itself. */
#ifndef HISTEG_KEYMEMO_H
#define HISTEG_KEYMEMO_H

#include <Python.h>
#include <stdint.h>

#include "_mum.h"

/* A running 128-bit digest of a key's parts (two 64-bit lanes fed alike through different multipliers; a string's
 * lanes get CPython's hash of it and a hash of its data of our own). `usable` drops to 0 at a part it cannot digest
 * (a value compared otherwise than by identity, an int past 64 bits): the key is then made and looked up as before. */
typedef struct {
    uint64_t a, b;
    Py_ssize_t count;
    int usable;
} KeyDigest;

#define KEY_P0 0xa0761d6478bd642full
#define KEY_P1 0xe7037ed1a0b428dbull
#define KEY_P2 0x8ebc6af09c88c6e3ull
#define KEY_P3 0x589965cc75374cc3ull

enum { KEY_TAG_STR = 1, KEY_TAG_INT, KEY_TAG_TUPLE, KEY_TAG_BYTES, KEY_TAG_SAME, KEY_TAG_END };

/* One part into both lanes; its kind (tag) picks the multipliers, so that equal words of two kinds differ. */
static inline void
key_digest_feed(KeyDigest *d, uint64_t tag, uint64_t wa, uint64_t wb)
{
    d->a = histeg_mum(d->a ^ wa, KEY_P0 ^ tag * KEY_P2);
    d->b = histeg_mum(d->b ^ wb, KEY_P1 ^ tag * KEY_P3);
}

void key_digest_start(KeyDigest *d, uint64_t shape);
void key_digest_add(KeyDigest *d, PyObject *part);
/* Adds one part the key compares by identity (a class whose metaclass hashes and compares as type does, None, True,
 * False, a sentinel object), as key_digest_add does, without asking what it is. */
static inline void
key_digest_add_identity(KeyDigest *d, PyObject *part)
{
    if (d->usable) {
        d->count++;
        key_digest_feed(d, KEY_TAG_SAME, (uint64_t)(uintptr_t)part, (uint64_t)(uintptr_t)part);
    }
}

/* Adds an int's value, as key_digest_add does for an int object of that value. */
static inline void
key_digest_add_int(KeyDigest *d, long long number)
{
    if (d->usable) {
        d->count++;
        key_digest_feed(d, KEY_TAG_INT, (uint64_t)number, (uint64_t)number);
    }
}

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
