/* _opentable.h: the growth and placement shared by the open-addressing tables of _keymemo.c and _typefacts.c
 * (power-of-two capacities, linear probing, no removal; an all-zero entry is an empty slot). */
#ifndef HISTEG_OPENTABLE_H
#define HISTEG_OPENTABLE_H

#include <Python.h>
#include <string.h>

/* Where an entry's probe starts in a table of `cap` slots, and whether a slot holds an entry. */
typedef size_t (*OpenTableHome)(const void *entry, size_t cap);
typedef int (*OpenTableUsed)(const void *entry);

/* Copies `entry` (`size` bytes) into the first empty slot of its probe in `entries`. */
static inline void
open_table_place(char *entries, size_t cap, size_t size, const void *entry, OpenTableHome home, OpenTableUsed used)
{
    size_t i = home(entry, cap);
    while (used(entries + i * size)) {
        i = (i + 1) & (cap - 1);
    }
    memcpy(entries + i * size, entry, size);
}

/* Makes room for one more entry: twice the slots (`first` when there are none) once `count + 1` entries would fill more
 * than `load` (a fraction, in quarters) of them, the entries placed again. 0, or -1 with a MemoryError set (the table
 * is as it was). */
static inline int
open_table_reserve(void **entries, size_t *cap, size_t count, size_t first, int quarters, size_t size, OpenTableHome home,
                   OpenTableUsed used)
{
    if ((count + 1) * 4 <= *cap * (size_t)quarters) {
        return 0;
    }
    size_t grown = *cap ? *cap * 2 : first;
    char *fresh = PyMem_Calloc(grown, size), *old = *entries;
    if (fresh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < *cap; k++) {
        if (used(old + k * size)) {
            open_table_place(fresh, grown, size, old + k * size, home, used);
        }
    }
    PyMem_Free(old);
    *entries = fresh;
    *cap = grown;
    return 0;
}

/* Empties the table and hands back what it held (`*taken` slots), for the caller to release and PyMem_Free: releasing
 * may free an object, which may run code that uses the table, empty by then. */
static inline void *
open_table_take(void **entries, size_t *cap, size_t *count, size_t *taken)
{
    void *held = *entries;
    *taken = *cap;
    *entries = NULL;
    *cap = *count = 0;
    return held;
}

#endif
