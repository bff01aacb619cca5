/* What the value tables said about a class, asked once: see _typefacts.h. Open addressing on the class's address, no
 * removal; emptied when `limit` classes are kept (a program that makes classes without end). */
#include "_typefacts.h"

static void
place(TypeFact *entries, size_t cap, TypeFact entry)
{
    size_t i = type_fact_slot(entry.cls, cap);
    while (entries[i].cls != NULL) {
        i = (i + 1) & (cap - 1);
    }
    entries[i] = entry;
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
    if ((facts->count + 1) * 2 > facts->cap) {  /* at most half full: most lookups end at the first slot */
        size_t cap = facts->cap ? facts->cap * 2 : 256;
        TypeFact *entries = PyMem_Calloc(cap, sizeof(TypeFact));
        if (entries == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        for (size_t i = 0; i < facts->cap; i++) {
            if (facts->entries[i].cls != NULL) {
                place(entries, cap, facts->entries[i]);
            }
        }
        PyMem_Free(facts->entries);
        facts->entries = entries;
        facts->cap = cap;
    }
    TypeFact entry = {0};
    entry.cls = (PyTypeObject *)Py_NewRef((PyObject *)cls);
    place(facts->entries, facts->cap, entry);
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
    TypeFact *entries = facts->entries;
    size_t cap = facts->cap;
    facts->entries = NULL;
    facts->cap = facts->count = 0;
    for (size_t i = 0; i < cap; i++) {
        release(&entries[i]);  /* may free a class, which may run code: the table is empty by then */
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
