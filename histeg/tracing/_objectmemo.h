/* _objectmemo.c: the id of a program's object or of a tuple, found again by what its key is made of. */
#ifndef HISTEG_OBJECTMEMO_H
#define HISTEG_OBJECTMEMO_H

#include <Python.h>

/* Why: a parser passes the same token to a dozen methods, and builds the same tuple of token types (`(Keyword, 'AS')`)
 * in every call that matches one; each time its key was made again or digested: each field read, the tables asked
 * what the field's class is, each text hashed. On a lexer's suite tuples alone were a fifth of what values cost, and
 * most objects recorded had the very fields they had the last time.
 *
 * Why it is safe: an object's key is made of its class, its field names and, per field, either the field's value (a
 * str, an int, a bool, None, the unset marker) or the field's class alone (a program's object shown by its type); a
 * tuple's key is made of its items, each immutable or taken by its class. An entry holds the class, the names and the
 * values it compared by identity (so none is freed and its address reused while it is kept) and the classes it took;
 * it is found again only for a value of that class with the same name and value objects and fields of the same
 * classes, whose key is then the key that gave the id. A key made of anything else (a class by identity, a
 * container's content) is never kept here. */

#define OBJECT_MEMO_FIELDS 16
#define OBJECT_MEMO_SLOTS 8192  /* direct-mapped by what the key is made of: a new entry replaces the one in its slot */

typedef struct {
    PyTypeObject *cls;                         /* strong; NULL: an empty slot */
    Py_ssize_t n;
    PyObject *names[OBJECT_MEMO_FIELDS];       /* strong; NULL for a tuple's items */
    PyObject *values[OBJECT_MEMO_FIELDS];      /* strong, or NULL where the field is taken by its class alone */
    PyTypeObject *classes[OBJECT_MEMO_FIELDS]; /* strong where the field is taken by its class alone, else NULL */
    unsigned long long id;
} ObjectMemoEntry;

typedef struct {
    ObjectMemoEntry *entries;  /* OBJECT_MEMO_SLOTS of them once one was kept, else NULL */
    size_t count;
} ObjectMemo;

/* What an object memo entry compares: `n` values of a `cls` value (with their `names`, NULL for a tuple's items),
 * each by identity when `held` (a tuple's items) or object_memo_by_value says so, else by its class. */
typedef struct {
    PyTypeObject *cls;
    PyObject *const *names;
    PyObject *const *values;
    Py_ssize_t n;
    PyObject *unset;  /* the marker of a slot that has no value */
    int held;
} ObjectMemoKey;

/* Whether a field's value is part of its object's key by value (kept and compared by identity): a str, an int, a bool,
 * None, or the unset marker. Any other field the memo keeps is taken by its class. */
static inline int
object_memo_by_value(PyObject *item, PyObject *unset)
{
    PyTypeObject *cls = Py_TYPE(item);
    return cls == &PyUnicode_Type || cls == &PyLong_Type || cls == &PyBool_Type || item == Py_None || item == unset;
}

/* 1 and *id when an entry compares equal to `key`; else 0. */
int object_memo_get(const ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long *id);
/* Keeps `id` under `key` (replacing its slot's entry); 0, or -1 (a MemoryError set) when the table cannot be made. The
 * caller vouches that the value's key is made as described above; more than OBJECT_MEMO_FIELDS values are not kept. */
int object_memo_put(ObjectMemo *memo, const ObjectMemoKey *key, unsigned long long id);
void object_memo_clear(ObjectMemo *memo);
int object_memo_traverse(ObjectMemo *memo, visitproc visit, void *arg);

#endif
