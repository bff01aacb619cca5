/* What the value tables said about a class, asked once: see _typefacts.h. Open addressing on the class's address, no
 * removal; emptied when `limit` classes are kept (a program that makes classes without end). */
#include "_typefacts.h"
#include "_opentable.h"

static size_t
fact_home(const void *entry, size_t cap)
{
    return type_fact_slot(((const TypeFact *)entry)->cls, cap);
}

static int
fact_used(const void *entry)
{
    return ((const TypeFact *)entry)->cls != NULL;
}

static void
release(TypeFact *entry)
{
    Py_CLEAR(entry->cls);
    for (int k = 0; k < TYPE_FACT_ANSWERS; k++) {
        Py_CLEAR(entry->answers[k]);
    }
    Py_CLEAR(entry->names);
}

TypeFact *
type_fact_slow(TypeFacts *facts, PyTypeObject *cls, size_t limit)
{
    if (facts->cap) {
        for (size_t i = type_fact_slot(cls, facts->cap);; i = (i + 1) & (facts->cap - 1)) {
            TypeFact *entry = &facts->entries[i];
            if (entry->cls == cls) {
                return entry;
            }
            if (entry->cls == NULL) {
                break;
            }
        }
    }
    if (facts->count >= limit) {
        type_facts_clear(facts);
    }
    if (open_table_reserve((void **)&facts->entries, &facts->cap, facts->count, 256, 2, sizeof(TypeFact), fact_home, fact_used) < 0) {
        return NULL;  /* at most half full: most lookups end in the first two slots */
    }
    TypeFact entry = {0};
    entry.cls = (PyTypeObject *)Py_NewRef((PyObject *)cls);
    open_table_place((char *)facts->entries, facts->cap, sizeof(TypeFact), &entry, fact_home, fact_used);
    facts->count++;
    for (size_t i = type_fact_slot(cls, facts->cap);; i = (i + 1) & (facts->cap - 1)) {
        if (facts->entries[i].cls == cls) {
            return &facts->entries[i];
        }
    }
}

void
type_facts_clear(TypeFacts *facts)
{
    size_t cap;
    TypeFact *entries = open_table_take((void **)&facts->entries, &facts->cap, &facts->count, &cap);
    for (size_t i = 0; i < cap; i++) {
        release(&entries[i]);
    }
    PyMem_Free(entries);
}

int
type_facts_traverse(TypeFacts *facts, visitproc visit, void *arg)
{
    for (size_t i = 0; i < facts->cap; i++) {
        TypeFact *entry = &facts->entries[i];
        if (entry->cls == NULL) {
            continue;
        }
        Py_VISIT(entry->cls);
        for (int k = 0; k < TYPE_FACT_ANSWERS; k++) {
            Py_VISIT(entry->answers[k]);
        }
        Py_VISIT(entry->names);
    }
    return 0;
}
