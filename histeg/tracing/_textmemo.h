/* Texts of builtin containers the walk has shown already, found again while nothing they show has changed.
 *
 * A parser's state keeps the same list of token dicts through a whole parse, and a lexer the same list of
 * characters; each new state is a new value whose text shows that list again, and building it again was most of
 * the walk's cost (jmespath). An entry keeps the nodes the walk read the text from, in its order: each container by
 * its class, its length and how many of its items it showed, each scalar (an exact str, int, float, bool or None) by
 * identity, each object shown by its class name by that class. The text is the entry's whenever the same
 * container, walked from the same budget (or from one that covers it, where the walk never ran out in it), has the
 * same nodes. The scalars and classes are held, so that no address compared can be reused; a scalar holds nothing,
 * cannot be weakly referenced and has no finalizer, and classes are held as the object memo holds them. The
 * containers are not held: a list or dict kept alive could outlive, through what the program puts in it later, an
 * object whose finalizer the program would see run. */
#ifndef HISTEG_TEXTMEMO_H
#define HISTEG_TEXTMEMO_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject *scalar;   /* a scalar shown by its value; NULL for a container or a class */
    PyTypeObject *type; /* the node's class */
    Py_ssize_t size;    /* a container's length; -1 for anything else */
    Py_ssize_t shown;   /* how many of a container's items (a dict's pairs) the text shows; -1: only its length */
} TextNode;

typedef struct {
    TextNode *nodes;    /* borrowed while the walk reads them, held once kept */
    Py_ssize_t count, cap;
} TextShape;

typedef struct {
    PyObject *root;     /* the container's address (not held); NULL: an empty slot */
    Py_ssize_t depth;
    Py_ssize_t budget;  /* the walk's budget when it started on the container */
    Py_ssize_t consumed;  /* what the container's text took of it */
    int ran_out;        /* whether the budget ran out in it: then only the same budget gives the same text */
    PyObject *text;     /* held */
    TextShape shape;
} TextEntry;

typedef struct {
    TextEntry *slots;   /* TEXT_MEMO_SLOTS, direct-mapped by (root, depth), made at the first entry */
    Py_ssize_t held;    /* nodes kept by all entries */
} TextMemo;

#define TEXT_MEMO_SLOTS 1024
#define TEXT_MEMO_MAX_NODES 256  /* per entry (a walk's budget shows 64) */
#define TEXT_MEMO_MAX_HELD (1 << 16)  /* over all entries: what the memo may keep alive past the program's use */

/* A builtin container's length, as a shape compares it. */
static inline Py_ssize_t
text_container_length(PyObject *value)
{
    return PyDict_Check(value) ? PyDict_GET_SIZE(value) : Py_SIZE(value);
}

int text_shape_add(TextShape *shape, const TextNode *nodes, Py_ssize_t count);
void text_shape_free(TextShape *shape);

/* The entry for (root, depth) whose text a walk starting on it with `budget` would make, if the container still
 * has its nodes; NULL when none. */
TextEntry *text_memo_find(TextMemo *memo, PyObject *root, Py_ssize_t depth, Py_ssize_t budget);
/* Keeps `text` for (root, depth), made from `budget` with `consumed` of it, with `shape` (whose scalars and classes
 * it holds from here on; the shape is emptied when kept). 0 when kept, 1 when the memo cannot take it, -1 on a
 * memory error. */
int text_memo_put(TextMemo *memo, PyObject *root, Py_ssize_t depth, Py_ssize_t budget, Py_ssize_t consumed, PyObject *text,
                  TextShape *shape);
void text_memo_clear(TextMemo *memo);

#endif
