/* A growable array's storage doubled until it holds `need` items: the trace buffer's and a text shape's. */
#ifndef HISTEG_GROW_H
#define HISTEG_GROW_H

#include <Python.h>

/* 0, or -1 with MemoryError set (the array unchanged); `first` is the capacity of an empty array's first storage. */
static inline int
histeg_grow(void **data, Py_ssize_t *cap, Py_ssize_t need, Py_ssize_t first, size_t item)
{
    if (need <= *cap) {
        return 0;
    }
    Py_ssize_t grown = *cap ? *cap : first;
    while (grown < need) {
        grown *= 2;
    }
    void *moved = PyMem_Realloc(*data, (size_t)grown * item);
    if (moved == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *data = moved;
    *cap = grown;
    return 0;
}

#endif
