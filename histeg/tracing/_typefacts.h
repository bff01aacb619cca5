/* _typefacts.c: what the value tables said about a class, kept in C so that it is asked once. */
#ifndef HISTEG_TYPEFACTS_H
#define HISTEG_TYPEFACTS_H

#include <Python.h>
#include <stdint.h>

/* Why: recording a program's object as a key reads, per object and per field, a handful of tables keyed by its class
 * (its layout, its kind, whether it is shown by its type, which key shapes it takes): on a parser's suite those dict
 * and set lookups were a quarter of what making a key's digest costs. The tables only ever gain entries, and an entry,
 * once there, keeps its answer: an answer found is final, and is kept here with a reference to it and to its class (so
 * neither is freed while it is kept, nor its address reused). A missing answer is never kept: the table is asked
 * again the next time, as Python may fill it meanwhile. */

#define TYPE_FACT_ANSWERS 6  /* dict tables whose answer for a class can be kept (the caller numbers them) */

typedef struct {
    PyTypeObject *cls;                     /* strong; NULL: an empty slot */
    PyObject *answers[TYPE_FACT_ANSWERS];  /* strong; NULL: not found yet */
    uint32_t members;                      /* bit k: found in the set numbered k (a set only gains members) */
    PyObject *names;                       /* strong: field names (a tuple) this class's objects were last seen with */
    int names_plain;                       /* what the names table said of `names` */
} TypeFact;

typedef struct {
    TypeFact *entries;
    size_t cap, count;
} TypeFacts;

static inline size_t
type_fact_slot(PyTypeObject *cls, size_t cap)
{
    uint64_t h = ((uint64_t)(uintptr_t)cls >> 4) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 24) & (cap - 1);
}

/* The entry of `cls`, made empty when there is none; NULL (a MemoryError set) when the table cannot grow. Entries move
 * when the table grows: a pointer is good until the next call. */
TypeFact *type_fact_slow(TypeFacts *facts, PyTypeObject *cls, size_t limit);

static inline TypeFact *
type_fact(TypeFacts *facts, PyTypeObject *cls, size_t limit)
{
    if (facts->cap) {  /* at most half full: most classes are in their first two slots */
        size_t slot = type_fact_slot(cls, facts->cap);
        TypeFact *entry = &facts->entries[slot];
        if (entry->cls == cls) {
            return entry;
        }
        entry = &facts->entries[(slot + 1) & (facts->cap - 1)];
        if (entry->cls == cls) {
            return entry;
        }
    }
    return type_fact_slow(facts, cls, limit);
}
void type_facts_clear(TypeFacts *facts);
int type_facts_traverse(TypeFacts *facts, visitproc visit, void *arg);

#endif
