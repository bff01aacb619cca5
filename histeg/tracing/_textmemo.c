/* The table of _textmemo.h: direct-mapped, an entry replaced by the next one that maps to its slot. */
#include "_textmemo.h"
#include "_grow.h"

#include <stdint.h>

int
text_shape_add(TextShape *shape, const TextNode *nodes, Py_ssize_t count)
{
    void *storage = shape->nodes;
    int failed = histeg_grow(&storage, &shape->cap, shape->count + count, 32, sizeof(TextNode));
    shape->nodes = storage;
    if (failed) {
        return -1;
    }
    memcpy(shape->nodes + shape->count, nodes, (size_t)count * sizeof(TextNode));
    shape->count += count;
    return 0;
}

void
text_shape_free(TextShape *shape)
{
    PyMem_Free(shape->nodes);
    *shape = (TextShape){NULL, 0, 0};
}

/* Whether `value` is the node at *at and holds the nodes that follow it in the shape, as the walk read them. */
static int
matches(PyObject *value, const TextShape *shape, Py_ssize_t *at)
{
    if (*at >= shape->count) {
        return 0;
    }
    const TextNode *node = &shape->nodes[(*at)++];
    if (node->scalar != NULL) {
        return value == node->scalar;
    }
    if (Py_TYPE(value) != node->type) {
        return 0;
    }
    if (node->size < 0) {
        return 1;  /* an object shown by its class */
    }
    if (text_container_length(value) != node->size) {
        return 0;
    }
    if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0, pairs = 0;
        PyObject *key, *item;
        while (pairs < node->shown && PyDict_Next(value, &pos, &key, &item)) {
            if (!matches(key, shape, at) || !matches(item, shape, at)) {
                return 0;
            }
            pairs++;
        }
        return pairs == (node->shown < 0 ? 0 : node->shown);
    }
    for (Py_ssize_t i = 0; i < node->shown; i++) {
        if (!matches(PyList_CheckExact(value) ? PyList_GET_ITEM(value, i) : PyTuple_GET_ITEM(value, i), shape, at)) {
            return 0;
        }
    }
    return 1;
}

static TextEntry *
slot_of(TextMemo *memo, PyObject *root, Py_ssize_t depth)
{
    uintptr_t h = ((uintptr_t)root >> 4) * (uintptr_t)0x9E3779B97F4A7C15ull + (uintptr_t)depth;
    return &memo->slots[(h >> 20) & (TEXT_MEMO_SLOTS - 1)];
}

static void
drop(TextMemo *memo, TextEntry *entry)
{
    if (entry->root == NULL) {
        return;
    }
    PyObject *text = entry->text;
    TextShape shape = entry->shape;
    memo->held -= shape.count;
    *entry = (TextEntry){NULL, 0, 0, 0, 0, NULL, {NULL, 0, 0}};
    /* released once the slot is empty: freeing a scalar runs no code, a class may, and the slot is never seen half-made */
    for (Py_ssize_t i = 0; i < shape.count; i++) {
        Py_XDECREF(shape.nodes[i].scalar);
        Py_DECREF(shape.nodes[i].type);
    }
    text_shape_free(&shape);
    Py_DECREF(text);
}

TextEntry *
text_memo_find(TextMemo *memo, PyObject *root, Py_ssize_t depth, Py_ssize_t budget)
{
    if (memo->slots == NULL) {
        return NULL;
    }
    TextEntry *entry = slot_of(memo, root, depth);
    if (entry->root != root || entry->depth != depth) {
        return NULL;
    }
    if (entry->ran_out ? budget != entry->budget : budget - entry->consumed <= 0) {
        return NULL;  /* the walk would run out elsewhere in it */
    }
    Py_ssize_t at = 0;
    if (matches(root, &entry->shape, &at) && at == entry->shape.count) {
        return entry;
    }
    drop(memo, entry);  /* something it shows has changed */
    return NULL;
}

int
text_memo_put(TextMemo *memo, PyObject *root, Py_ssize_t depth, Py_ssize_t budget, Py_ssize_t consumed, PyObject *text,
              TextShape *shape)
{
    if (memo->slots == NULL) {
        memo->slots = PyMem_Calloc(TEXT_MEMO_SLOTS, sizeof(TextEntry));
        if (memo->slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    TextEntry *entry = slot_of(memo, root, depth);
    drop(memo, entry);
    if (shape->count > TEXT_MEMO_MAX_NODES || memo->held + shape->count > TEXT_MEMO_MAX_HELD) {
        return 1;
    }
    for (Py_ssize_t i = 0; i < shape->count; i++) {
        Py_XINCREF(shape->nodes[i].scalar);
        Py_INCREF(shape->nodes[i].type);
    }
    memo->held += shape->count;
    *entry = (TextEntry){root, depth, budget, consumed, budget - consumed <= 0, Py_NewRef(text), *shape};
    *shape = (TextShape){NULL, 0, 0};
    return 0;
}

void
text_memo_clear(TextMemo *memo)
{
    if (memo->slots == NULL) {
        return;
    }
    for (Py_ssize_t s = 0; s < TEXT_MEMO_SLOTS; s++) {
        drop(memo, &memo->slots[s]);
    }
    PyMem_Free(memo->slots);
    memo->slots = NULL;
    memo->held = 0;
}
