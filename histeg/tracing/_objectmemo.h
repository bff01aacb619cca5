/* _objectmemo.c: the id of a program's object or of a tuple, found again by what its key is made of. */
#ifndef HISTEG_OBJECTMEMO_H
#define HISTEG_OBJECTMEMO_H

#include <Python.h>
#include <stdint.h>

/* Why: a parser passes the same token, and the same token list, to a dozen methods, and builds the same tuple of
 * token types (`(Keyword, 'AS')`) in every call that matches one; each time its key was made again or digested: each
 * field read, the tables asked what each field's class is, each text hashed. On a lexer's suite most objects and
 * tuples recorded had the very parts they had the last time.
 *
 * Why it is safe: an object's key is made of its class, its field names and, per field, either the field's value (a
 * str, an int, a bool, None, the unset marker), or the field's class alone (a program's object shown by its type), or
 * a list's or tuple's class, length and items, each taken so; a tuple's key is made of its items, each immutable or
 * taken by its class. An entry holds the class, the names and the values it compares by identity (so none is freed
 * and its address reused while it is kept) and the classes it compares; it is found again only for a value of that
 * class whose parts are those, and whose key is then the key that gave the id. A key made of anything else (a class
 * by identity, a dict's content, containers in containers) is never kept here. */

#define OBJECT_MEMO_PARTS 64
#define OBJECT_MEMO_SLOTS 8192  /* direct-mapped by what the key is made of: a new entry replaces the one in its slot */

enum { MEMO_BY_IDENTITY, MEMO_BY_CLASS, MEMO_CONTAINER };  /* how a part is compared; a container's items follow it */

typedef struct {
    PyTypeObject *cls;   /* strong; NULL: an empty slot */
    Py_ssize_t n;
    uint64_t hash;
    unsigned long long id;
    PyObject **names;    /* n, strong or NULL (a tuple's items, a container's); one block with the arrays below */
    PyObject **refs;     /* n, strong: the value (by identity), or its class (by class, a container) */
    Py_ssize_t *sizes;   /* n: a container's length */
    uint8_t *modes;      /* n */
} ObjectMemoEntry;

typedef struct {
    ObjectMemoEntry *entries;  /* OBJECT_MEMO_SLOTS of them once one was kept, else NULL */
    size_t count;
} ObjectMemo;

/* What an entry compares: `n` parts of a `cls` value, each with its name (`names` NULL: none has one), value and
 * mode (`modes` NULL: all by identity, a tuple's items). */
typedef struct {
    PyTypeObject *cls;
    Py_ssize_t n;
    PyObject *const *names;
    PyObject *const *values;
    const uint8_t *modes;
} ObjectMemoKey;

/* Whether a value is part of a key by value (kept and compared by identity): a str, an int, a bool, None, or the
 * unset marker. Any other part the memo keeps is taken by its class. */
static inline int
object_memo_by_value(PyObject *item, PyObject *unset)
{
    PyTypeObject *cls = Py_TYPE(item);
    return cls == &PyUnicode_Type || cls == &PyLong_Type || cls == &PyBool_Type || item == Py_None || item == unset;
}

/* 1 and *id when an entry compares equal to `key`; else 0. */
int object_memo_get(const ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long *id);
/* Keeps `id` under `key` (replacing its slot's entry); 0, or -1 (a MemoryError set) when no memory could be had. The
 * caller vouches that the value's key is made as described above; more than OBJECT_MEMO_PARTS parts are not kept. */
int object_memo_put(ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long id);
void object_memo_clear(ObjectMemo *memo);
int object_memo_traverse(ObjectMemo *memo, visitproc visit, void *arg);

#endif
