/* Splitting event streams by entry point and decoding them, in C.
 *
 * The same algorithms as histeg/traces/events.py, which is their
 * specification and the reference of the parity tests; this module only
 * makes them fast (a suite records tens of millions of line events, and a
 * Python loop costs about 0.1 us per word).
 *
 *   Splitter().feed(thread, words: bytes); .take() / .finish() -> [(number, thread, function, label, words: Words)]
 *   Decoder() .define(...) .define_value(...) .decode(words: bytes) -> (columns..., line events, edges, functions)
 *             .index(words: bytes) -> (stream digest, line events, calls, edges, functions), for a trace's index
 *
 * Decoding runs in four phases, those of events.decode under the same names: read_tokens (the events
 * read into calls), build_columns, compute_digests and export_columns. decode runs them in one call;
 * Decoder.tokens / .columns / .digests / .export run one alone, for the parity tests.
 *
 * Words are little-endian uint16 as in the trace file; this module assumes a
 * little-endian machine (histeg.traces.seal byte-swaps elsewhere).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "../tracing/_mum.h"

#define MAX_LINE 0xFFEFu
#define OP_CALL 0xFFF0u
#define CALL_ROOT 0x1u
#define CALL_GEN 0x2u
#define CALL_BARE 0x4u  /* no parameter count and no ids: the function's parameters, none captured */
#define OP_RETURN 0xFFF8u
#define OP_RETURN_BARE 0xFFFFu  /* OP_RETURN of value id 0, in one word */
#define OP_RAISE 0xFFF9u
#define OP_YIELD 0xFFFAu
#define OP_RESUME 0xFFFBu
#define OP_LINES_OFF 0xFFFCu
#define OP_LINES_ON 0xFFFDu
#define OP_THREAD 0xFFFEu
#define INLINE_INT 0x80000000u
#define FALLBACK_BASE 0x10000u
#define END_RUNNING 0
#define END_RETURNED 1
#define END_RAISED 2
#define INCOMPLETE 0x6C696E65736F6666ull
#define INT_DOMAIN 0x696E6C696E65696Eull
#define SEED_A 0x243F6A8885A308D3ull
#define SEED_B 0x13198A2E03707344ull
#define LANE_A 0xA0761D6478BD642Full
#define LANE_B 0xE7037ED1A0B428DBull
#define MAX_THREADS (1u << 20)
#define REC_VALUE 0x56  /* format.REC_VALUE: a V record of the stream */
#define REC_CHUNK 0x43  /* format.REC_CHUNK: a C record, a chunk of one thread's events */
#define INTERFACE 6  /* seal.INTERFACE: the methods and results histeg.traces.seal uses (Decoder.index from 1, value_records
                      * from 2, Words from 3, value_records' digests and digest from 4, digests of STREAM_DIGEST 2 and Splitter.records from 5,
                      * bare calls and returns, and Decoder.define's parameter count, from 6) */

/* -- growable arrays ------------------------------------------------------- */

typedef struct {
    void *data;
    size_t len, cap, item;
} Vec;

static int
vec_reserve(Vec *v, size_t more)
{
    if (v->len + more <= v->cap) {
        return 0;
    }
    size_t cap = v->cap ? v->cap : 16;
    while (cap < v->len + more) {
        cap *= 2;
    }
    void *data = PyMem_Realloc(v->data, cap * v->item);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    v->data = data;
    v->cap = cap;
    return 0;
}

/* One uint32 onto `v`, without a call to memcpy: a stack of call indices takes one per call of a stream. */
static inline int
vec_push_u32(Vec *v, uint32_t item)
{
    if (vec_reserve(v, 1) < 0) {
        return -1;
    }
    ((uint32_t *)v->data)[v->len++] = item;
    return 0;
}

static int
vec_push(Vec *v, const void *items, size_t count)
{
    if (vec_reserve(v, count) < 0) {
        return -1;
    }
    memcpy((char *)v->data + v->len * v->item, items, count * v->item);
    v->len += count;
    return 0;
}

#define VEC(type) ((Vec){NULL, 0, 0, sizeof(type)})
#define AT(v, type, i) (((type *)(v).data)[i])

static void
vec_free(Vec *v)
{
    PyMem_Free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

/* uint32 -> uint32 map, open addressing (keys stored + 1, 0 is empty) */
typedef struct {
    uint32_t *keys, *values;
    size_t cap, used;
} Map;

static size_t
map_slot(const Map *m, uint32_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 17) & (m->cap - 1);
    while (m->keys[i] != 0 && m->keys[i] != key + 1) {
        i = (i + 1) & (m->cap - 1);
    }
    return i;
}

static int
map_put(Map *m, uint32_t key, uint32_t value)
{
    if ((m->used + 1) * 2 > m->cap) {
        Map grown = {NULL, NULL, m->cap ? m->cap * 2 : 64, 0};
        grown.keys = PyMem_Calloc(grown.cap, sizeof(uint32_t));
        grown.values = PyMem_Calloc(grown.cap, sizeof(uint32_t));
        if (grown.keys == NULL || grown.values == NULL) {
            PyMem_Free(grown.keys);
            PyMem_Free(grown.values);
            PyErr_NoMemory();
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i]) {
                size_t j = map_slot(&grown, m->keys[i] - 1);
                grown.keys[j] = m->keys[i];
                grown.values[j] = m->values[i];
                grown.used++;
            }
        }
        PyMem_Free(m->keys);
        PyMem_Free(m->values);
        *m = grown;
    }
    size_t i = map_slot(m, key);
    if (m->keys[i] == 0) {
        m->keys[i] = key + 1;
        m->used++;
    }
    m->values[i] = value;
    return 0;
}

static int
map_get(const Map *m, uint32_t key, uint32_t *value)
{
    if (m->cap == 0) {
        return 0;
    }
    size_t i = map_slot(m, key);
    if (m->keys[i] == 0) {
        return 0;
    }
    *value = m->values[i];
    return 1;
}

static void
map_free(Map *m)
{
    PyMem_Free(m->keys);
    PyMem_Free(m->values);
    m->keys = m->values = NULL;
    m->cap = m->used = 0;
}

static PyObject *
corrupt(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    PyErr_FormatV(PyExc_ValueError, format, args);
    va_end(args);
    return NULL;
}

/* -- Words: an entry point's events, handed out without a copy ----------------
 * A read-only buffer that owns the memory the splitter gathered them in: the largest entry point of a
 * suite is tens of megabytes, and a bytes object would hold a second copy while the first is freed. */

typedef struct {
    PyObject_HEAD
    void *data;
    Py_ssize_t size;
} WordsObject;

static int
words_getbuffer(WordsObject *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->size, 1, flags);
}

static Py_ssize_t
words_length(WordsObject *self)
{
    return self->size;
}

static void
words_dealloc(WordsObject *self)
{
    PyMem_Free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs words_as_buffer = {(getbufferproc)words_getbuffer, NULL};
static PySequenceMethods words_as_sequence = {.sq_length = (lenfunc)words_length};

static PyTypeObject WordsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.traces._decode.Words",
    .tp_doc = "An entry point's event words (little-endian uint16), as a read-only buffer.",
    .tp_basicsize = sizeof(WordsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)words_dealloc,
    .tp_as_buffer = &words_as_buffer,
    .tp_as_sequence = &words_as_sequence,
};

/* The vector's items as a Words object, which takes over its memory (trimmed to its length); NULL on error,
 * the vector then left as it was. */
static PyObject *
words_from_vec(Vec *v)
{
    WordsObject *words = PyObject_New(WordsObject, &WordsType);
    if (words == NULL) {
        return NULL;
    }
    size_t bytes = v->len * v->item;
    void *data = v->data != NULL && bytes ? PyMem_Realloc(v->data, bytes) : NULL;
    if (data == NULL && bytes) {
        data = v->data;  /* could not trim: keep the larger block */
    }
    else if (!bytes) {
        PyMem_Free(v->data);
    }
    words->data = data;
    words->size = (Py_ssize_t)bytes;
    v->data = NULL;
    v->len = v->cap = 0;
    return (PyObject *)words;
}

/* -- Splitter -------------------------------------------------------------- */

typedef struct {
    uint32_t thread, function, label;
    uint64_t live;    /* calls running or suspended: at 0 no later event can belong to it */
    int handed;       /* given out by take() or finish() */
    Vec words;        /* uint16 */
    Vec silent;       /* uint32, sorted: the functions whose lines are off, as last passed on */
    uint64_t version;
    int64_t silent_thread;  /* the thread whose set `silent` was last brought up to, at `version` */
    int64_t current_thread;
} SplitEntry;

typedef struct {
    PyObject_HEAD
    Vec entries;      /* SplitEntry */
    Vec stacks;       /* Vec (uint32 entry indices), by thread index */
    Map generators;   /* generator call id -> entry index */
    Vec silents;      /* Vec (uint32, sorted), by thread index: the functions whose lines are off, as its stream says */
    uint64_t version; /* counts the changes of any thread's set */
    Vec finished;     /* uint32: entries whose calls all ended, not handed out yet */
} SplitterObject;

static int
ended(SplitterObject *self, uint32_t owner)
{
    SplitEntry *e = &AT(self->entries, SplitEntry, owner);
    if (--e->live == 0) {
        return vec_push(&self->finished, &owner, 1);
    }
    return 0;
}

static int
sorted_insert(Vec *set, uint32_t value)
{
    uint32_t *items = set->data;
    size_t lo = 0, hi = set->len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (items[mid] < value) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    if (lo < set->len && items[lo] == value) {
        return 0;
    }
    if (vec_reserve(set, 1) < 0) {
        return -1;
    }
    items = set->data;
    memmove(items + lo + 1, items + lo, (set->len - lo) * sizeof(uint32_t));
    items[lo] = value;
    set->len++;
    return 0;
}

static void
sorted_remove(Vec *set, uint32_t value)
{
    uint32_t *items = set->data;
    for (size_t i = 0; i < set->len; i++) {
        if (items[i] == value) {
            memmove(items + i, items + i + 1, (set->len - i - 1) * sizeof(uint32_t));
            set->len--;
            return;
        }
    }
}

static int
push_marker(Vec *out, uint16_t op, uint32_t operand)
{
    uint16_t w[3] = {op, (uint16_t)(operand & 0xFFFF), (uint16_t)(operand >> 16)};
    return vec_push(out, w, 3);
}

/* `thread`'s vector (of uint32) in `by_thread`, a Vec of Vecs by thread index grown as threads appear. */
static Vec *
of_thread(Vec *by_thread, uint32_t thread)
{
    if (thread >= MAX_THREADS) {
        corrupt("thread index %u out of range", thread);
        return NULL;
    }
    while (by_thread->len <= thread) {
        Vec empty = VEC(uint32_t);
        if (vec_push(by_thread, &empty, 1) < 0) {
            return NULL;
        }
    }
    return &AT(*by_thread, Vec, thread);
}

/* The set of functions whose lines are off in `thread`'s stream (Splitter._silent in events.py). */
static Vec *
thread_silent(SplitterObject *self, uint32_t thread)
{
    return of_thread(&self->silents, thread);
}

static int
emit(SplitterObject *self, uint32_t owner, uint32_t thread, const uint16_t *words, size_t count)
{
    SplitEntry *e = &AT(self->entries, SplitEntry, owner);
    if (e->current_thread != (int64_t)thread) {
        if (push_marker(&e->words, OP_THREAD, thread) < 0) {
            return -1;
        }
        e->current_thread = thread;
    }
    if (e->version != self->version || e->silent_thread != (int64_t)thread) {
        Vec *silent = thread_silent(self, thread);
        if (silent == NULL) {
            return -1;
        }
        e = &AT(self->entries, SplitEntry, owner);
        const uint32_t *now = silent->data, *was = e->silent.data;
        size_t i = 0, j = 0;
        while (i < silent->len) {  /* off now, not before: in increasing order */
            while (j < e->silent.len && was[j] < now[i]) {
                j++;
            }
            if (!(j < e->silent.len && was[j] == now[i]) && push_marker(&e->words, OP_LINES_OFF, now[i]) < 0) {
                return -1;
            }
            i++;
        }
        for (j = 0, i = 0; j < e->silent.len; j++) {  /* off before, on now */
            while (i < silent->len && now[i] < was[j]) {
                i++;
            }
            if (!(i < silent->len && now[i] == was[j]) && push_marker(&e->words, OP_LINES_ON, was[j]) < 0) {
                return -1;
            }
        }
        e->silent.len = 0;
        if (vec_push(&e->silent, silent->data, silent->len) < 0) {
            return -1;
        }
        e->version = self->version;
        e->silent_thread = thread;
    }
    return vec_push(&e->words, words, count);
}

static Vec *
thread_stack(SplitterObject *self, uint32_t thread)
{
    return of_thread(&self->stacks, thread);
}

/* The events of a chunk that go to one entry point one after another, copied in one piece when the run ends: a copy
 * per event was most of the splitter's time. A run ends before anything that changes what `emit` would add before
 * it (an entry point starting, lines turned off or on) and before its entry point can be handed out. */
typedef struct {
    uint32_t owner;
    size_t start, end;
    int active;
} Run;

static inline int
run_flush(SplitterObject *self, Run *run, uint32_t thread, const uint16_t *w)
{
    if (!run->active) {
        return 0;
    }
    run->active = 0;
    return emit(self, run->owner, thread, w + run->start, run->end - run->start);
}

static inline int
run_add(SplitterObject *self, Run *run, uint32_t thread, const uint16_t *w, uint32_t owner, size_t i, size_t count)
{
    if (run->active && run->owner == owner && run->end == i) {
        run->end = i + count;
        return 0;
    }
    if (run_flush(self, run, thread, w) < 0) {
        return -1;
    }
    *run = (Run){owner, i, i + count, 1};
    return 0;
}

/* A root call at w[i] starts an entry point, whose index goes to *owner. */
static int
start_entry(SplitterObject *self, uint32_t thread, const uint16_t *w, size_t i, uint32_t *owner)
{
    Vec *silent = thread_silent(self, thread);
    if (silent == NULL) {
        return -1;
    }
    if (silent->len) {  /* the collector turns every function's lines back on at a root call */
        silent->len = 0;
        self->version++;
    }
    SplitEntry e = {thread, w[i + 1] | (uint32_t)w[i + 2] << 16, 0, 0, 0, VEC(uint16_t), VEC(uint32_t), UINT64_MAX, -1, -1};
    if (w[i] & CALL_ROOT) {
        e.label = w[i + 3] | (uint32_t)w[i + 4] << 16;
    }
    *owner = (uint32_t)self->entries.len;
    return vec_push(&self->entries, &e, 1);
}

/* The call event at w[i] goes to the entry point of the calling call, or starts one; *size is its length in words. */
static inline int
split_call(SplitterObject *self, Run *run, Vec *stack, uint32_t thread, const uint16_t *w, size_t n, size_t i, size_t *size)
{
    unsigned int word = w[i];
    size_t count = 3 + 2 * !!(word & CALL_ROOT) + 2 * !!(word & CALL_GEN);
    if (!(word & CALL_BARE)) {
        if (i + count >= n) {
            corrupt("call cut short in thread %u", thread);
            return -1;
        }
        count += 1 + 2 * (size_t)w[i + count];
    }
    if (i + count > n) {
        corrupt("call cut short in thread %u", thread);
        return -1;
    }
    uint32_t owner;
    if (stack->len) {
        owner = AT(*stack, uint32_t, stack->len - 1);
    }
    else if (run_flush(self, run, thread, w) < 0 || start_entry(self, thread, w, i, &owner) < 0) {
        return -1;
    }
    if (word & CALL_GEN) {
        size_t at = i + 3 + 2 * !!(word & CALL_ROOT);
        if (map_put(&self->generators, w[at] | (uint32_t)w[at + 1] << 16, owner) < 0) {
            return -1;
        }
    }
    if (run_add(self, run, thread, w, owner, i, count) < 0 || vec_push(stack, &owner, 1) < 0) {
        return -1;
    }
    AT(self->entries, SplitEntry, owner).live++;
    *size = count;
    return 0;
}

/* Any event at w[i] but a line or a call: three words, an op and its operand (OP_RETURN_BARE: one word, *size). */
static inline int
split_event(SplitterObject *self, Run *run, Vec *stack, uint32_t thread, const uint16_t *w, size_t n, size_t i, size_t *size)
{
    unsigned int word = w[i];
    *size = word == OP_RETURN_BARE ? 1 : 3;
    if (i + *size > n) {
        corrupt("event 0x%04x cut short in thread %u", word, thread);
        return -1;
    }
    uint32_t operand = *size == 3 ? w[i + 1] | (uint32_t)w[i + 2] << 16 : 0, owner;
    if (word == OP_RESUME) {
        if (!map_get(&self->generators, operand, &owner)) {
            corrupt("resumption of an unknown generator call %u in thread %u", operand, thread);
            return -1;
        }
        return run_add(self, run, thread, w, owner, i, 3) < 0 || vec_push(stack, &owner, 1) < 0 ? -1 : 0;
    }
    if (word == OP_RETURN || word == OP_RETURN_BARE || word == OP_RAISE || word == OP_YIELD) {
        if (stack->len == 0) {
            corrupt("a call ends on the empty stack of thread %u", thread);
            return -1;
        }
        owner = AT(*stack, uint32_t, --stack->len);
        if (run_add(self, run, thread, w, owner, i, *size) < 0) {
            return -1;
        }
        if (word == OP_YIELD) {
            return 0;
        }
        if (AT(self->entries, SplitEntry, owner).live == 1 && run_flush(self, run, thread, w) < 0) {
            return -1;  /* its last call ends: the entry point is complete from here on */
        }
        return ended(self, owner);
    }
    if (word == OP_LINES_OFF || word == OP_LINES_ON) {
        if (run_flush(self, run, thread, w) < 0) {
            return -1;
        }
        Vec *silent = thread_silent(self, thread);
        if (silent == NULL || (word == OP_LINES_OFF && sorted_insert(silent, operand) < 0)) {
            return -1;
        }
        if (word == OP_LINES_ON) {
            sorted_remove(silent, operand);
        }
        self->version++;
        return 0;
    }
    corrupt("unknown event 0x%04x in thread %u", word, thread);
    return -1;
}

/* feed(thread, words): the next chunk of a thread's stream, in file order (Splitter.feed in events.py). Runs of
 * line words, most of a stream, go whole to the entry point of the thread's current call. */
/* One chunk of `thread`'s stream, `nbytes` at `w`, split as feed() does; 0, or -1 with an error set. */
static int
feed_words(SplitterObject *self, unsigned int thread, const uint16_t *w, size_t nbytes)
{
    size_t n = nbytes / 2, i = 0;
    int status = -1;
    Vec *stack = NULL;
    if (nbytes % 2) {
        corrupt("a chunk of %zu bytes in thread %u: events are 2-byte words", nbytes, thread);
    }
    else if ((stack = thread_stack(self, thread)) != NULL) {
        status = 0;
    }
    Run run = {0, 0, 0, 0};
    while (status == 0 && i < n) {
        if (w[i] <= MAX_LINE) {
            size_t end = i + 1;
            while (end < n && w[end] <= MAX_LINE) {
                end++;
            }
            if (stack->len) {
                status = run_add(self, &run, thread, w, AT(*stack, uint32_t, stack->len - 1), i, end - i);
            }
            i = end;
        }
        else if ((w[i] & 0xFFF8u) == OP_CALL) {
            size_t size = 0;
            status = split_call(self, &run, stack, thread, w, n, i, &size);
            i += size;
        }
        else {
            size_t size = 0;
            status = split_event(self, &run, stack, thread, w, n, i, &size);
            i += size;
        }
    }
    if (status == 0) {
        status = run_flush(self, &run, thread, w);
    }
    return status;
}

static PyObject *
splitter_feed(SplitterObject *self, PyObject *args)
{
    unsigned int thread;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "Iy*", &thread, &view)) {
        return NULL;
    }
    int status = feed_words(self, thread, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return status < 0 ? NULL : Py_NewRef(Py_None);
}

/* (number, thread, function, label, words) of an entry, whose words are freed: it is handed out once. */
static PyObject *
hand_out(SplitterObject *self, uint32_t number)
{
    SplitEntry *e = &AT(self->entries, SplitEntry, number);
    PyObject *words = words_from_vec(&e->words);
    if (words == NULL) {
        return NULL;
    }
    PyObject *item = Py_BuildValue("(IIIIN)", number, e->thread, e->function, e->label, words);
    if (item != NULL) {
        e->handed = 1;
        vec_free(&e->silent);
    }
    return item;
}

static PyObject *
splitter_take(SplitterObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *list = PyList_New(0);
    for (size_t k = 0; list != NULL && k < self->finished.len; k++) {
        PyObject *item = hand_out(self, AT(self->finished, uint32_t, k));
        if (item == NULL || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(item);
    }
    self->finished.len = 0;
    return list;
}

static PyObject *
splitter_finish(SplitterObject *self, PyObject *unused)
{
    PyObject *list = splitter_take(self, unused);
    for (size_t k = 0; list != NULL && k < self->entries.len; k++) {
        if (AT(self->entries, SplitEntry, k).handed) {
            continue;
        }
        PyObject *item = hand_out(self, (uint32_t)k);
        if (item == NULL || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(list);
        }
        else {
            Py_DECREF(item);
        }
    }
    return list;
}

static void
splitter_dealloc(SplitterObject *self)
{
    for (size_t i = 0; i < self->entries.len; i++) {
        vec_free(&AT(self->entries, SplitEntry, i).words);
        vec_free(&AT(self->entries, SplitEntry, i).silent);
    }
    vec_free(&self->entries);
    for (size_t i = 0; i < self->stacks.len; i++) {
        vec_free(&AT(self->stacks, Vec, i));
    }
    vec_free(&self->stacks);
    for (size_t i = 0; i < self->silents.len; i++) {
        vec_free(&AT(self->silents, Vec, i));
    }
    vec_free(&self->silents);
    vec_free(&self->finished);
    map_free(&self->generators);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
splitter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    SplitterObject *self = (SplitterObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->entries = VEC(SplitEntry);
    self->stacks = VEC(Vec);
    self->silents = VEC(Vec);
    self->finished = VEC(uint32_t);
    return (PyObject *)self;
}

static PyObject *splitter_records(SplitterObject *self, PyObject *args);

static PyMethodDef splitter_methods[] = {
    {"feed", (PyCFunction)splitter_feed, METH_VARARGS, "feed(thread, words): the next chunk of a thread's event stream"},
    {"records", (PyCFunction)splitter_records, METH_VARARGS,
     "records(data, pos) -> (end, values, ids, fields, digests): the V and C records from pos on, chunks fed"},
    {"take", (PyCFunction)splitter_take, METH_NOARGS, "take() -> [(number, thread, function, label, words)] finished since the last call"},
    {"finish", (PyCFunction)splitter_finish, METH_NOARGS, "finish() -> every entry not handed out yet: finished, then still running"},
    {NULL},
};

static PyTypeObject SplitterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.traces._decode.Splitter",
    .tp_basicsize = sizeof(SplitterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = splitter_new,
    .tp_dealloc = (destructor)splitter_dealloc,
    .tp_methods = splitter_methods,
};

/* -- Decoder --------------------------------------------------------------- */

typedef struct {
    int defined;
    int64_t first;
    uint64_t hash;
    uint32_t nparams; /* its F record's parameter names: a bare call's parameters */
    int32_t *lines;   /* sorted code lines */
    size_t nlines;
    uint32_t *dense;  /* by line - lines[0], up to the last code line: its position (position() in one load) */
    size_t ndense;
} FuncDef;

#define MAX_DENSE (1u << 16)

typedef struct {
    PyObject_HEAD
    FuncDef *funcs;
    size_t nfuncs;
    uint64_t *values;
    size_t nvalues;
} DecoderObject;

static inline uint64_t
mix(uint64_t state, uint64_t word)
{
    uint64_t z = (state ^ word) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One word into both lanes of a digest (_lanes in events.py): one multiplication each. A digest is a chain of these
 * steps, each waiting for the one before; splitmix64's two multiplications and three shifts per step made 40 % of
 * sealing's index pass. */
static inline void
feed(uint64_t *lanes, uint64_t word)
{
    lanes[0] = histeg_mum(lanes[0] ^ word, LANE_A);
    lanes[1] = histeg_mum(lanes[1] ^ word, LANE_B);
}

static inline uint64_t
value_hash(const DecoderObject *d, uint32_t id)
{
    if (id & INLINE_INT) {
        return mix(INT_DOMAIN, id & ~INLINE_INT);
    }
    return id < d->nvalues ? d->values[id] : 0;
}

static inline uint64_t
function_hash(const DecoderObject *d, uint32_t function)
{
    return function < d->nfuncs ? d->funcs[function].hash : 0;
}

/* What a stream digest takes of an event other than a line: its kind first, where no line position can be. */
#define EVENT_WORD(op) (0x8000000000000000ull | (uint64_t)(op))
/* A line position in slot `slot` (0-2) of a stream digest's word. */
#define PACK(position, slot) ((uint64_t)((position) & 0x1FFFFFu) << (21 * (slot)))

static inline uint32_t
position(const FuncDef *f, uint32_t line)
{
    if (f->ndense) {
        int64_t offset = (int64_t)line - f->lines[0];
        return offset >= 0 && (uint64_t)offset < f->ndense ? f->dense[offset] : (uint32_t)(FALLBACK_BASE + (int64_t)line - f->first);
    }
    size_t lo = 0, hi = f->nlines;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->lines[mid] < (int32_t)line) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    if (lo < f->nlines && f->lines[lo] == (int32_t)line) {
        return (uint32_t)lo;
    }
    return (uint32_t)(FALLBACK_BASE + (int64_t)line - f->first);
}

typedef struct {
    uint32_t function, at, thread, result, nlines;
    int32_t parent;
    uint8_t end, complete;
} DCall;

typedef struct {
    uint32_t call, value;
} Pair;

/* Groups `pairs` (call, value) by call, keeping their order: offsets (n + 1) and values. */
static int
group(const Vec *pairs, size_t ncalls, uint32_t **starts_out, uint32_t **values_out)
{
    uint32_t *starts = PyMem_Calloc(ncalls + 1, sizeof(uint32_t));
    uint32_t *values = PyMem_Malloc((pairs->len ? pairs->len : 1) * sizeof(uint32_t));
    uint32_t *fill = PyMem_Malloc((ncalls ? ncalls : 1) * sizeof(uint32_t));
    if (starts == NULL || values == NULL || fill == NULL) {
        PyMem_Free(starts);
        PyMem_Free(values);
        PyMem_Free(fill);
        PyErr_NoMemory();
        return -1;
    }
    const Pair *p = pairs->data;
    for (size_t i = 0; i < pairs->len; i++) {
        starts[p[i].call + 1]++;
    }
    for (size_t c = 0; c < ncalls; c++) {
        starts[c + 1] += starts[c];
        fill[c] = starts[c];
    }
    for (size_t i = 0; i < pairs->len; i++) {
        values[fill[p[i].call]++] = p[i].value;
    }
    PyMem_Free(fill);
    *starts_out = starts;
    *values_out = values;
    return 0;
}

static PyObject *
as_bytes(const void *data, size_t bytes)
{
    return PyBytes_FromStringAndSize(bytes ? data : "", (Py_ssize_t)bytes);
}

static int
mark_incomplete(Vec *calls, Vec *stacks, Vec *gens, uint32_t function)
{
    for (size_t t = 0; t < stacks->len; t++) {
        Vec *s = &AT(*stacks, Vec, t);
        for (size_t k = 0; k < s->len; k++) {
            DCall *c = &AT(*calls, DCall, AT(*s, uint32_t, k));
            if (c->function == function && c->end == END_RUNNING) {
                c->complete = 0;
            }
        }
    }
    for (size_t k = 0; k < gens->len; k++) {
        DCall *c = &AT(*calls, DCall, AT(*gens, uint32_t, k));
        if (c->function == function && c->end == END_RUNNING) {
            c->complete = 0;
        }
    }
    return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A set of uint64 that grows with its distinct items (a suite's calls repeat few distinct functions and
 * edges), open addressing; 0 is kept apart as `zero`. */
typedef struct {
    uint64_t *slots;
    size_t cap, used;
    int zero;
} U64Set;

static inline size_t
set_slot(const uint64_t *slots, size_t cap, uint64_t item)
{
    size_t slot = (size_t)((item * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (slots[slot] != 0 && slots[slot] != item) {
        slot = (slot + 1) & (cap - 1);
    }
    return slot;
}

static int
set_add(U64Set *set, uint64_t item)
{
    if (item == 0) {
        set->zero = 1;
        return 0;
    }
    if ((set->used + 1) * 2 > set->cap) {
        size_t cap = set->cap ? set->cap * 4 : 64;
        uint64_t *slots = PyMem_Calloc(cap, sizeof(uint64_t));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (size_t k = 0; k < set->cap; k++) {
            if (set->slots[k]) {
                slots[set_slot(slots, cap, set->slots[k])] = set->slots[k];
            }
        }
        PyMem_Free(set->slots);
        set->slots = slots;
        set->cap = cap;
    }
    size_t slot = set_slot(set->slots, set->cap, item);
    set->used += set->slots[slot] == 0;
    set->slots[slot] = item;
    return 0;
}

/* The items, sorted, in a new array of `width` bytes each (4: uint32, 8: uint64); the set is freed. */
static void *
set_sorted(U64Set *set, size_t width, size_t *count)
{
    size_t n = set->used + (size_t)set->zero, kept = 0;
    uint64_t *items = PyMem_Malloc((n ? n : 1) * sizeof(uint64_t));
    if (items == NULL) {
        PyMem_Free(set->slots);
        memset(set, 0, sizeof(*set));
        PyErr_NoMemory();
        return NULL;
    }
    if (set->zero) {
        items[kept++] = 0;
    }
    for (size_t k = 0; k < set->cap; k++) {
        if (set->slots[k]) {
            items[kept++] = set->slots[k];
        }
    }
    PyMem_Free(set->slots);
    memset(set, 0, sizeof(*set));
    qsort(items, n, sizeof(uint64_t), cmp_u64);
    if (width == 4) {
        uint32_t *narrow = (uint32_t *)items;
        for (size_t k = 0; k < n; k++) {
            narrow[k] = (uint32_t)items[k];  /* in place: narrow[k] lies within items[0:k + 1] */
        }
    }
    *count = n;
    return items;
}

/* -- Decoder, phase 1: tokens -----------------------------------------------
 * The events of one entry point's stream read into calls, in the order they started
 * (read_tokens in events.py). */

typedef struct {
    Vec calls;        /* DCall, in the order they started */
    Vec lines;        /* Pair (call, position), in stream order */
    Vec params;       /* uint32 value ids, call after call */
    Vec param_start;  /* uint32: where each call's parameters start, then their end */
    Vec yields;       /* Pair (call, value id), in stream order */
    uint64_t line_events;
} Tokens;

static void
tokens_init(Tokens *t)
{
    t->calls = VEC(DCall);
    t->lines = VEC(Pair);
    t->params = VEC(uint32_t);
    t->param_start = VEC(uint32_t);
    t->yields = VEC(Pair);
    t->line_events = 0;
}

static void
tokens_free(Tokens *t)
{
    vec_free(&t->calls);
    vec_free(&t->lines);
    vec_free(&t->params);
    vec_free(&t->param_start);
    vec_free(&t->yields);
}

/* The state of a stream as it is read (_TokenReader in events.py). */
typedef struct {
    const DecoderObject *decoder;
    int with_yields;
    Tokens *tokens;
    Vec stacks;       /* Vec (uint32 call indices), by thread index */
    Vec *stack;       /* the current thread's */
    uint32_t thread;
    Map generators;   /* generator call id -> call index */
    Vec gens;         /* uint32: the generator calls, which a LINES_OFF reaches while suspended */
    Vec silent;       /* uint32, sorted: the functions whose lines are off */
    uint64_t *lanes;  /* indexing (index_entry): the stream digest, and nothing of the lines, parameters or
                       * yields kept; NULL when decoding */
    Vec threads;      /* uint32: when indexing, the threads in the order the stream first shows them */
} TokenReader;

static void
reader_free(TokenReader *r)
{
    for (size_t t = 0; t < r->stacks.len; t++) {
        vec_free(&AT(r->stacks, Vec, t));
    }
    vec_free(&r->stacks);
    vec_free(&r->gens);
    vec_free(&r->silent);
    vec_free(&r->threads);
    map_free(&r->generators);
}

static int
cut_short(void)
{
    corrupt("inconsistent event stream (cut short)");
    return -1;
}

/* The line words w[i:end] belong to the current call of the thread (to none when it runs none). */
static inline int
read_lines(TokenReader *r, const uint16_t *w, size_t i, size_t end)
{
    Vec *stack = r->stack;
    if (stack->len == 0) {
        return 0;
    }
    Tokens *t = r->tokens;
    uint32_t top = AT(*stack, uint32_t, stack->len - 1);
    DCall *c = &AT(t->calls, DCall, top);
    const FuncDef *f = &r->decoder->funcs[c->function];
    c->nlines += (uint32_t)(end - i);
    t->line_events += end - i;
    if (r->lanes != NULL) {  /* the run's length, then its positions three to a word (one hash step for three lines) */
        feed(r->lanes, end - i);
        size_t k = i;
        for (; k + 3 <= end; k += 3) {
            feed(r->lanes, PACK(position(f, w[k]), 0) | PACK(position(f, w[k + 1]), 1) | PACK(position(f, w[k + 2]), 2));
        }
        if (k < end) {
            feed(r->lanes, PACK(position(f, w[k]), 0) | (k + 1 < end ? PACK(position(f, w[k + 1]), 1) : 0));
        }
        return 0;
    }
    if (vec_reserve(&t->lines, end - i) < 0) {
        return -1;
    }
    Pair *out = (Pair *)t->lines.data + t->lines.len;
    for (size_t k = i; k < end; k++) {
        out[k - i].call = top;
        out[k - i].value = position(f, w[k]);
    }
    t->lines.len += end - i;
    return 0;
}

/* The call event at w[i] starts a call on the current thread; *next is where the next event starts. */
static inline int
read_call(TokenReader *r, const uint16_t *w, size_t n, size_t i, size_t *next)
{
#define NEED(k) do { if (i + (k) > n) return cut_short(); } while (0)
    Tokens *t = r->tokens;
    unsigned int word = w[i];
    NEED(3);
    uint32_t function = w[i + 1] | (uint32_t)w[i + 2] << 16;
    if (function >= r->decoder->nfuncs || !r->decoder->funcs[function].defined) {
        corrupt("call of an undefined function %u", function);
        return -1;
    }
    i += 3 + 2 * !!(word & CALL_ROOT);
    int has_gen = !!(word & CALL_GEN);
    uint32_t gen = 0;
    if (has_gen) {
        NEED(2);
        gen = w[i] | (uint32_t)w[i + 1] << 16;
        i += 2;
    }
    int bare = !!(word & CALL_BARE);  /* no count, no ids: the function's parameters, none captured */
    size_t count;
    if (bare) {
        NEED(0);  /* a root call's label */
        count = r->decoder->funcs[function].nparams;
    }
    else {
        NEED(1);
        count = w[i];
        NEED(1 + 2 * count);
    }
#undef NEED
    const uint16_t *ids = bare ? NULL : w + i + 1;  /* read only when not bare */
    if (r->lanes != NULL) {
        feed(r->lanes, EVENT_WORD(word & (OP_CALL | CALL_GEN)));
        feed(r->lanes, function_hash(r->decoder, function));
        feed(r->lanes, count);
        for (size_t k = 0; k < count; k++) {
            feed(r->lanes, value_hash(r->decoder, bare ? 0 : ids[2 * k] | (uint32_t)ids[2 * k + 1] << 16));
        }
    }
    else {
        uint32_t start = (uint32_t)t->params.len;
        if (vec_push(&t->param_start, &start, 1) < 0 || vec_reserve(&t->params, count) < 0) {
            return -1;
        }
        for (size_t k = 0; k < count; k++) {
            AT(t->params, uint32_t, t->params.len++) = bare ? 0 : ids[2 * k] | (uint32_t)ids[2 * k + 1] << 16;
        }
    }
    *next = bare ? i : i + 1 + 2 * count;
    Vec *stack = r->stack;
    int32_t parent = stack->len ? (int32_t)AT(*stack, uint32_t, stack->len - 1) : -1;
    if (parent < 0 && t->calls.len) {
        corrupt("a second root call in one entry point");
        return -1;
    }
    uint32_t index = (uint32_t)t->calls.len;
    int off = 0;
    for (size_t k = 0; r->lanes == NULL && k < r->silent.len; k++) {  /* an index has no use for a call's completeness */
        off |= AT(r->silent, uint32_t, k) == function;
    }
    DCall c = {function, parent >= 0 ? AT(t->calls, DCall, parent).nlines : 0, r->thread, 0, 0, parent, END_RUNNING, !off};
    if (vec_reserve(&t->calls, 1) < 0) {
        return -1;
    }
    AT(t->calls, DCall, t->calls.len++) = c;
    if (has_gen && (map_put(&r->generators, gen, index) < 0 || vec_push_u32(&r->gens, index) < 0)) {
        return -1;
    }
    return vec_push_u32(stack, index);
}

/* The following events ran on thread `thread`. */
static int
read_thread(TokenReader *r, uint32_t thread)
{
    if (thread >= MAX_THREADS) {
        corrupt("thread index %u out of range", thread);
        return -1;
    }
    while (r->stacks.len <= thread) {
        Vec empty = VEC(uint32_t);
        if (vec_push(&r->stacks, &empty, 1) < 0) {
            return -1;
        }
    }
    r->thread = thread;
    r->stack = &AT(r->stacks, Vec, thread);
    if (r->lanes != NULL) {
        size_t seen = 0;
        while (seen < r->threads.len && AT(r->threads, uint32_t, seen) != thread) {
            seen++;
        }
        if (seen == r->threads.len && vec_push(&r->threads, &thread, 1) < 0) {
            return -1;
        }
        feed(r->lanes, EVENT_WORD(OP_THREAD));
        feed(r->lanes, seen);
    }
    return 0;
}

/* The current call returned, raised or yielded `operand`. */
static inline int
read_left(TokenReader *r, unsigned int word, uint32_t operand)
{
    Vec *stack = r->stack;
    if (stack->len == 0) {
        corrupt("inconsistent event stream (IndexError)");
        return -1;
    }
    uint32_t top = AT(*stack, uint32_t, --stack->len);
    if (r->lanes != NULL) {
        feed(r->lanes, EVENT_WORD(word));
        feed(r->lanes, value_hash(r->decoder, operand));
        if (word == OP_YIELD) {
            return 0;
        }
    }
    if (word == OP_YIELD) {
        Pair p = {top, operand};
        return r->with_yields ? vec_push(&r->tokens->yields, &p, 1) : 0;
    }
    DCall *c = &AT(r->tokens->calls, DCall, top);
    c->end = word == OP_RETURN ? END_RETURNED : END_RAISED;
    c->result = operand;
    return 0;
}

/* Any event but a line or a call: three words, an op and its operand. */
static inline int
read_event(TokenReader *r, unsigned int word, uint32_t operand)
{
    if (word == OP_THREAD) {
        return read_thread(r, operand);
    }
    if (word == OP_RESUME) {
        uint32_t index;
        if (!map_get(&r->generators, operand, &index)) {
            corrupt("inconsistent event stream (KeyError)");
            return -1;
        }
        if (r->lanes != NULL) {
            feed(r->lanes, EVENT_WORD(OP_RESUME));
            feed(r->lanes, index);
        }
        return vec_push_u32(r->stack, index);
    }
    if (r->lanes != NULL && (word == OP_LINES_OFF || word == OP_LINES_ON)) {
        feed(r->lanes, EVENT_WORD(word));
        feed(r->lanes, function_hash(r->decoder, operand));
    }
    if (word == OP_LINES_OFF) {
        if (sorted_insert(&r->silent, operand) < 0) {
            return -1;
        }
        return mark_incomplete(&r->tokens->calls, &r->stacks, &r->gens, operand);
    }
    if (word == OP_LINES_ON) {
        sorted_remove(&r->silent, operand);
        return 0;
    }
    if (word == OP_RETURN || word == OP_RAISE || word == OP_YIELD) {
        return read_left(r, word, operand);
    }
    corrupt("unknown event 0x%04x", word);
    return -1;
}

/* Every event of w[0:n] into `tokens` (initialised by the caller, who frees it). Line words, most of a
 * stream, are read in runs here; the functions called per event are inlined. */
static int
read_tokens(const DecoderObject *self, const uint16_t *w, size_t n, int with_yields, Tokens *tokens, uint64_t *lanes)
{
    TokenReader r = {self, with_yields, tokens, VEC(Vec), NULL, 0, {NULL, NULL, 0, 0}, VEC(uint32_t), VEC(uint32_t), NULL, VEC(uint32_t)};
    int status = read_thread(&r, 0);  /* where a stream starts; a digest takes its first thread from its first OP_THREAD */
    r.lanes = lanes;
    size_t i = 0;
    while (status == 0 && i < n) {
        unsigned int word = w[i];
        if (word <= MAX_LINE) {
            size_t end = i + 1;
            while (end < n && w[end] <= MAX_LINE) {
                end++;
            }
            status = read_lines(&r, w, i, end);
            i = end;
        }
        else if ((word & 0xFFF8u) == OP_CALL) {
            status = read_call(&r, w, n, i, &i);
        }
        else if (word == OP_RETURN_BARE) {
            status = read_left(&r, OP_RETURN, 0);
            i += 1;
        }
        else if (i + 3 > n) {
            status = cut_short();
        }
        else {
            status = read_event(&r, word, w[i + 1] | (uint32_t)w[i + 2] << 16);
            i += 3;
        }
    }
    reader_free(&r);
    if (status == 0 && tokens->calls.len == 0) {
        corrupt("an entry point without a call");
        return -1;
    }
    uint32_t end = (uint32_t)tokens->params.len;
    return status < 0 ? -1 : lanes != NULL ? 0 : vec_push(&tokens->param_start, &end, 1);
}

/* -- Decoder, phase 2: columns ----------------------------------------------
 * The calls' fields as columns and their lists as offsets into flat columns (build_columns in
 * events.py); the same columns, in the same order, as events.CallColumns. */

typedef struct {
    size_t ncalls;
    uint32_t *function, *at, *thread, *result;
    int32_t *parent;
    uint8_t *end, *complete;
    uint32_t *line_start, *lines, *param_start, *params, *yield_start, *yields, *child_start, *children;
} CallColumns;

static void
columns_free(CallColumns *c)
{
    void *all[] = {c->function, c->at, c->thread, c->result, c->parent, c->end, c->complete, c->line_start, c->lines,
                   c->param_start, c->params, c->yield_start, c->yields, c->child_start, c->children};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        PyMem_Free(all[k]);
    }
    memset(c, 0, sizeof(*c));
}

/* The per-call columns, from the calls' fields. */
static int
call_fields(const Tokens *t, CallColumns *c)
{
    size_t n = t->calls.len;
    c->ncalls = n;
    c->function = PyMem_Malloc(n * 4);
    c->at = PyMem_Malloc(n * 4);
    c->thread = PyMem_Malloc(n * 4);
    c->result = PyMem_Malloc(n * 4);
    c->parent = PyMem_Malloc(n * 4);
    c->end = PyMem_Malloc(n ? n : 1);
    c->complete = PyMem_Malloc(n ? n : 1);
    if (!(c->function && c->at && c->thread && c->result && c->parent && c->end && c->complete)) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        const DCall *call = &AT(t->calls, DCall, k);
        c->function[k] = call->function;
        c->at[k] = call->at;
        c->thread[k] = call->thread;
        c->result[k] = call->result;
        c->parent[k] = call->parent;
        c->end[k] = call->end;
        c->complete[k] = call->complete;
    }
    return 0;
}

/* Phase 2. Takes over the tokens' parameters, grouped by call already; `c` is freed by the caller. */
static int
build_columns(Tokens *t, CallColumns *c)
{
    size_t ncalls = t->calls.len;
    memset(c, 0, sizeof(*c));
    if (call_fields(t, c) < 0) {
        return -1;
    }
    Vec parents = VEC(Pair);
    if (vec_reserve(&parents, ncalls) < 0) {
        return -1;
    }
    for (size_t k = 1; k < ncalls; k++) {
        Pair p = {(uint32_t)c->parent[k], (uint32_t)k};
        AT(parents, Pair, parents.len++) = p;
    }
    int failed = group(&t->lines, ncalls, &c->line_start, &c->lines) < 0 || group(&t->yields, ncalls, &c->yield_start, &c->yields) < 0
        || group(&parents, ncalls, &c->child_start, &c->children) < 0;
    vec_free(&parents);
    c->params = t->params.data;
    c->param_start = t->param_start.data;
    t->params = VEC(uint32_t);
    t->param_start = VEC(uint32_t);
    return failed ? -1 : 0;
}

/* -- Decoder, phase 3: digests ----------------------------------------------
 * Three digests per call, two 64-bit lanes each (compute_digests in events.py). */

typedef struct {
    uint64_t *subtree;  /* its whole subtree */
    uint64_t *own;      /* its function, values, outcome and children's functions */
    uint64_t *lines;    /* its line positions, or that not all were recorded */
} Digests;

static void
digests_free(Digests *d)
{
    PyMem_Free(d->subtree);
    PyMem_Free(d->own);
    PyMem_Free(d->lines);
    memset(d, 0, sizeof(*d));
}

/* What digests take of a call's lines (_line_words in events.py). */
static inline void
feed_lines(uint64_t *lanes, const CallColumns *c, size_t k)
{
    if (!c->complete[k]) {
        feed(lanes, INCOMPLETE);
        return;
    }
    feed(lanes, c->line_start[k + 1] - c->line_start[k]);
    for (uint32_t x = c->line_start[k]; x < c->line_start[k + 1]; x++) {
        feed(lanes, c->lines[x]);
    }
}

/* What digests take of a call's values: parameters, how it ended, its result (_value_words in events.py). */
static inline void
feed_values(uint64_t *lanes, const DecoderObject *self, const CallColumns *c, size_t k)
{
    feed(lanes, c->param_start[k + 1] - c->param_start[k]);
    for (uint32_t x = c->param_start[k]; x < c->param_start[k + 1]; x++) {
        feed(lanes, value_hash(self, c->params[x]));
    }
    feed(lanes, c->end[k] == END_RAISED ? END_RAISED : END_RETURNED);
    feed(lanes, c->end[k] != END_RUNNING ? value_hash(self, c->result[k]) : 0);
}

/* Phase 3, from the last call to the first: a call's children started after it, and its subtree digest
 * covers theirs. `d` is freed by the caller. */
static int
compute_digests(const DecoderObject *self, const CallColumns *c, Digests *d)
{
    size_t n = c->ncalls;
    d->subtree = PyMem_Malloc(n * 16);
    d->own = PyMem_Malloc(n * 16);
    d->lines = PyMem_Malloc(n * 16);
    if (d->subtree == NULL || d->own == NULL || d->lines == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t k = n; k-- > 0;) {
        uint64_t function = function_hash(self, c->function[k]);
        uint32_t first = c->child_start[k], stop = c->child_start[k + 1];
        uint64_t lines[2] = {SEED_A, SEED_B}, own[2] = {SEED_A, SEED_B}, subtree[2] = {SEED_A, SEED_B};
        feed_lines(lines, c, k);
        feed(own, function);
        feed_values(own, self, c, k);
        feed(own, stop - first);
        for (uint32_t x = first; x < stop; x++) {
            feed(own, function_hash(self, c->function[c->children[x]]));
        }
        feed(subtree, function);
        feed_lines(subtree, c, k);
        feed_values(subtree, self, c, k);
        feed(subtree, stop - first);
        for (uint32_t x = first; x < stop; x++) {
            uint32_t child = c->children[x];
            feed(subtree, c->at[child]);
            feed(subtree, d->subtree[2 * child]);
            feed(subtree, d->subtree[2 * child + 1]);
        }
        memcpy(d->lines + 2 * k, lines, 16);
        memcpy(d->own + 2 * k, own, 16);
        memcpy(d->subtree + 2 * k, subtree, 16);
    }
    return 0;
}

/* -- Decoder, phase 4: export -----------------------------------------------
 * The columns and digests as bytes, with the call graph's edges and functions (export_columns in
 * events.py); seal.columns_from_c makes them an events.Columns. */

/* The edges (caller << 32 | callee) and the functions called, sorted, each once; freed by the caller.
 * `function` and `parent` of `n` calls, each `stride` bytes apart (columns, or the calls of Tokens). */
static int
call_graph_of(const char *function, const char *parent, size_t stride, size_t n, uint64_t **edges, size_t *nedges,
              uint32_t **called, size_t *ncalled)
{
    U64Set pairs = {0}, functions = {0};
    int failed = n && set_add(&functions, *(const uint32_t *)function) < 0;
    uint64_t last = 0;
    for (size_t k = 1; k < n && !failed; k++) {  /* a call repeated from one caller (a loop's) is one edge: looked up once */
        uint32_t callee = *(const uint32_t *)(function + k * stride);
        int32_t caller = *(const int32_t *)(parent + k * stride);
        uint64_t edge = (uint64_t)*(const uint32_t *)(function + (size_t)caller * stride) << 32 | callee;
        if (k == 1 || edge != last) {
            failed = set_add(&pairs, edge) < 0;
            last = edge;
        }
    }
    for (size_t k = 0; k < pairs.cap && !failed; k++) {  /* every function called but the root is an edge's callee */
        failed = pairs.slots[k] && set_add(&functions, pairs.slots[k] & 0xFFFFFFFFu) < 0;
    }
    if (pairs.zero && !failed) {
        failed = set_add(&functions, 0) < 0;
    }
    if (failed) {
        PyMem_Free(pairs.slots);
        PyMem_Free(functions.slots);
        return -1;
    }
    *edges = set_sorted(&pairs, 8, nedges);
    *called = set_sorted(&functions, 4, ncalled);
    if (*edges == NULL || *called == NULL) {
        PyMem_Free(*edges);
        PyMem_Free(*called);
        PyMem_Free(pairs.slots);
        PyMem_Free(functions.slots);
        return -1;
    }
    return 0;
}

static int
call_graph(const CallColumns *c, uint64_t **edges, size_t *nedges, uint32_t **called, size_t *ncalled)
{
    return call_graph_of((const char *)c->function, (const char *)c->parent, 4, c->ncalls, edges, nedges, called, ncalled);
}

/* Phase 4: the tuple Decoder.decode returns. */
static PyObject *
export_columns(const CallColumns *c, const Digests *d, uint64_t line_events)
{
    uint64_t *edges;
    uint32_t *called;
    size_t nedges, ncalled, n = c->ncalls;
    if (call_graph(c, &edges, &nedges, &called, &ncalled) < 0) {
        return NULL;
    }
    PyObject *result = Py_BuildValue(
        "(NNNNNNNNNNNNNNNNKNNNN)",
        as_bytes(c->function, n * 4), as_bytes(c->parent, n * 4), as_bytes(c->at, n * 4), as_bytes(c->thread, n * 4),
        as_bytes(c->end, n), as_bytes(c->result, n * 4), as_bytes(c->complete, n),
        as_bytes(c->line_start, (n + 1) * 4), as_bytes(c->lines, c->line_start[n] * 4),
        as_bytes(c->param_start, (n + 1) * 4), as_bytes(c->params, c->param_start[n] * 4),
        as_bytes(c->yield_start, (n + 1) * 4), as_bytes(c->yields, c->yield_start[n] * 4),
        as_bytes(c->child_start, (n + 1) * 4), as_bytes(c->children, c->child_start[n] * 4),
        as_bytes(d->subtree, n * 16), (unsigned long long)line_events,
        as_bytes(edges, nedges * 8), as_bytes(called, ncalled * 4), as_bytes(d->own, n * 16), as_bytes(d->lines, n * 16));
    PyMem_Free(edges);
    PyMem_Free(called);
    return result;
}

/* decode(words, with_yields=True): the four phases in one call, the path sealing and comparisons take. */
static PyObject *
decoder_decode(DecoderObject *self, PyObject *args)
{
    Py_buffer view;
    int with_yields = 1;
    if (!PyArg_ParseTuple(args, "y*|p", &view, &with_yields)) {
        return NULL;
    }
    PyObject *result = NULL;
    Tokens tokens;
    CallColumns columns = {0};
    Digests digests = {0};
    tokens_init(&tokens);
    if (view.len % 2) {
        corrupt("an event stream of %zd bytes: events are 2-byte words", view.len);
    }
    else if (read_tokens(self, view.buf, (size_t)view.len / 2, with_yields, &tokens, NULL) == 0 && build_columns(&tokens, &columns) == 0
             && compute_digests(self, &columns, &digests) == 0) {
        result = export_columns(&columns, &digests, tokens.line_events);
    }
    PyBuffer_Release(&view);
    tokens_free(&tokens);
    columns_free(&columns);
    digests_free(&digests);
    return result;
}

/* index(words) -> (digest, line events, calls, edges, functions): what a trace's index says of one entry
 * point (index_entry in events.py), read in one pass that keeps the calls alone: a sealed suite's
 * entry points are indexed once each, and one of them can hold millions of line events. */
static PyObject *
decoder_index(DecoderObject *self, PyObject *args)
{
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) {
        return NULL;
    }
    PyObject *result = NULL;
    Tokens tokens;
    uint64_t lanes[2] = {SEED_A, SEED_B}, *edges = NULL;
    uint32_t *called = NULL;
    size_t nedges = 0, ncalled = 0;
    tokens_init(&tokens);
    if (view.len % 2) {
        corrupt("an event stream of %zd bytes: events are 2-byte words", view.len);
    }
    else if (read_tokens(self, view.buf, (size_t)view.len / 2, 0, &tokens, lanes) == 0
             && call_graph_of((const char *)tokens.calls.data + offsetof(DCall, function), (const char *)tokens.calls.data + offsetof(DCall, parent),
                              sizeof(DCall), tokens.calls.len, &edges, &nedges, &called, &ncalled) == 0) {
        result = Py_BuildValue("(NKnNN)", as_bytes(lanes, 16), (unsigned long long)tokens.line_events, (Py_ssize_t)tokens.calls.len,
                               as_bytes(edges, nedges * 8), as_bytes(called, ncalled * 4));
    }
    PyBuffer_Release(&view);
    tokens_free(&tokens);
    PyMem_Free(edges);
    PyMem_Free(called);
    return result;
}

/* -- Decoder: one phase at a time, for the parity tests -----------------------
 * Each takes what the phase before gives (as buffers, checked) and gives what its phase does. */

static void
release_views(Py_buffer *views, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        if (views[k].obj != NULL) {
            PyBuffer_Release(&views[k]);
        }
    }
}

/* The first `count` items of `tuple` as buffers (released by the caller with release_views). */
static int
get_views(PyObject *tuple, size_t count, Py_buffer *views)
{
    memset(views, 0, count * sizeof(Py_buffer));
    if (!PyTuple_Check(tuple) || (size_t)PyTuple_GET_SIZE(tuple) < count) {
        PyErr_Format(PyExc_TypeError, "expected a tuple of at least %zu buffers", count);
        return -1;
    }
    for (size_t k = 0; k < count; k++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(tuple, (Py_ssize_t)k), &views[k], PyBUF_SIMPLE) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
invalid(const char *what)
{
    PyErr_Format(PyExc_ValueError, "phase input: %s", what);
    return -1;
}

/* Offsets of `ncalls` lists into a flat column of `flat` items: from 0, never decreasing, to `flat`. */
static int
check_offsets(const Py_buffer *starts, size_t ncalls, size_t flat_bytes)
{
    const uint32_t *s = starts->buf;
    if ((size_t)starts->len != (ncalls + 1) * 4 || s[0] != 0 || (size_t)s[ncalls] * 4 != flat_bytes) {
        return invalid("offsets that do not match their column");
    }
    for (size_t k = 0; k < ncalls; k++) {
        if (s[k] > s[k + 1]) {
            return invalid("decreasing offsets");
        }
    }
    return 0;
}

/* Per call `width` bytes in each of views[0:count]. */
static int
check_per_call(const Py_buffer *views, const size_t *widths, size_t count, size_t ncalls)
{
    for (size_t k = 0; k < count; k++) {
        if ((size_t)views[k].len != widths[k] * ncalls) {
            return invalid("per-call columns of different lengths");
        }
    }
    return 0;
}

/* The root first (parent -1), every other call after its parent. */
static int
check_parents(const int32_t *parent, size_t ncalls)
{
    if (ncalls == 0 || parent[0] != -1) {
        return invalid("no root call");
    }
    for (size_t k = 1; k < ncalls; k++) {
        if (parent[k] < 0 || (size_t)parent[k] >= k) {
            return invalid("a call before its parent");
        }
    }
    return 0;
}

static const size_t CALL_FIELD_WIDTHS[7] = {4, 4, 4, 4, 1, 4, 1};  /* function, parent, at, thread, end, result, complete */

/* tokens(words, with_yields=True) -> (function, parent, at, thread, end, result, complete, lines, params,
 * param_start, yields, line events); lines and yields are (call, value) pairs of uint32, in stream order. */
static PyObject *
decoder_tokens(DecoderObject *self, PyObject *args)
{
    Py_buffer view;
    int with_yields = 1;
    if (!PyArg_ParseTuple(args, "y*|p", &view, &with_yields)) {
        return NULL;
    }
    PyObject *result = NULL;
    Tokens t;
    CallColumns c = {0};
    tokens_init(&t);
    if (view.len % 2) {
        corrupt("an event stream of %zd bytes: events are 2-byte words", view.len);
    }
    else if (read_tokens(self, view.buf, (size_t)view.len / 2, with_yields, &t, NULL) == 0 && call_fields(&t, &c) == 0) {
        size_t n = c.ncalls;
        result = Py_BuildValue("(NNNNNNNNNNNK)", as_bytes(c.function, n * 4), as_bytes(c.parent, n * 4), as_bytes(c.at, n * 4),
                               as_bytes(c.thread, n * 4), as_bytes(c.end, n), as_bytes(c.result, n * 4), as_bytes(c.complete, n),
                               as_bytes(t.lines.data, t.lines.len * 8), as_bytes(t.params.data, t.params.len * 4),
                               as_bytes(t.param_start.data, t.param_start.len * 4), as_bytes(t.yields.data, t.yields.len * 8),
                               (unsigned long long)t.line_events);
    }
    PyBuffer_Release(&view);
    tokens_free(&t);
    columns_free(&c);
    return result;
}

/* (call, value) pairs of calls below `ncalls`, copied into `out`. */
static int
pairs_from(const Py_buffer *view, size_t ncalls, Vec *out)
{
    const Pair *p = view->buf;
    size_t count = (size_t)view->len / sizeof(Pair);
    if ((size_t)view->len % sizeof(Pair)) {
        return invalid("pairs of odd length");
    }
    for (size_t k = 0; k < count; k++) {
        if (p[k].call >= ncalls) {
            return invalid("an item of no call");
        }
    }
    return vec_push(out, p, count);
}

/* Tokens from what decoder_tokens gives. */
static int
tokens_from(const Py_buffer *v, Tokens *t)
{
    size_t n = (size_t)v[0].len / 4;
    if (check_per_call(v, CALL_FIELD_WIDTHS, 7, n) < 0 || check_parents(v[1].buf, n) < 0 || check_offsets(&v[9], n, (size_t)v[8].len) < 0
        || pairs_from(&v[7], n, &t->lines) < 0 || pairs_from(&v[10], n, &t->yields) < 0 || vec_reserve(&t->calls, n) < 0
        || vec_push(&t->params, v[8].buf, (size_t)v[8].len / 4) < 0 || vec_push(&t->param_start, v[9].buf, n + 1) < 0) {
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        DCall c = {((uint32_t *)v[0].buf)[k], ((uint32_t *)v[2].buf)[k], ((uint32_t *)v[3].buf)[k], ((uint32_t *)v[5].buf)[k], 0,
                   ((int32_t *)v[1].buf)[k], ((uint8_t *)v[4].buf)[k], ((uint8_t *)v[6].buf)[k]};
        AT(t->calls, DCall, t->calls.len++) = c;
    }
    return 0;
}

static PyObject *
columns_as_tuple(const CallColumns *c)
{
    size_t n = c->ncalls;
    return Py_BuildValue("(NNNNNNNNNNNNNNN)", as_bytes(c->function, n * 4), as_bytes(c->parent, n * 4), as_bytes(c->at, n * 4),
                         as_bytes(c->thread, n * 4), as_bytes(c->end, n), as_bytes(c->result, n * 4), as_bytes(c->complete, n),
                         as_bytes(c->line_start, (n + 1) * 4), as_bytes(c->lines, c->line_start[n] * 4),
                         as_bytes(c->param_start, (n + 1) * 4), as_bytes(c->params, c->param_start[n] * 4),
                         as_bytes(c->yield_start, (n + 1) * 4), as_bytes(c->yields, c->yield_start[n] * 4),
                         as_bytes(c->child_start, (n + 1) * 4), as_bytes(c->children, c->child_start[n] * 4));
}

/* columns(tokens) -> the 15 columns of events.CallColumns, as bytes. */
static PyObject *
decoder_columns(DecoderObject *self, PyObject *args)
{
    (void)self;
    PyObject *tuple, *result = NULL;
    if (!PyArg_ParseTuple(args, "O", &tuple)) {
        return NULL;
    }
    Py_buffer views[11];
    Tokens t;
    CallColumns c = {0};
    tokens_init(&t);
    if (get_views(tuple, 11, views) == 0 && tokens_from(views, &t) == 0 && build_columns(&t, &c) == 0) {
        result = columns_as_tuple(&c);
    }
    release_views(views, 11);
    tokens_free(&t);
    columns_free(&c);
    return result;
}

/* CallColumns over the 15 buffers of `v` (not copied: not to be freed). */
static int
columns_over(const Py_buffer *v, CallColumns *c)
{
    size_t n = (size_t)v[0].len / 4;
    if (check_per_call(v, CALL_FIELD_WIDTHS, 7, n) < 0 || check_parents(v[1].buf, n) < 0 || check_offsets(&v[7], n, (size_t)v[8].len) < 0
        || check_offsets(&v[9], n, (size_t)v[10].len) < 0 || check_offsets(&v[11], n, (size_t)v[12].len) < 0
        || check_offsets(&v[13], n, (size_t)v[14].len) < 0) {
        return -1;
    }
    *c = (CallColumns){n, v[0].buf, v[2].buf, v[3].buf, v[5].buf, v[1].buf, v[4].buf, v[6].buf, v[7].buf, v[8].buf, v[9].buf,
                       v[10].buf, v[11].buf, v[12].buf, v[13].buf, v[14].buf};
    for (size_t k = 0; k < n; k++) {
        for (uint32_t x = c->child_start[k]; x < c->child_start[k + 1]; x++) {
            if (c->children[x] <= k || c->children[x] >= n) {
                return invalid("a child before its parent");
            }
        }
    }
    return 0;
}

/* digests(columns) -> (subtree digests, own digests, line digests) */
static PyObject *
decoder_digests(DecoderObject *self, PyObject *args)
{
    PyObject *tuple, *result = NULL;
    if (!PyArg_ParseTuple(args, "O", &tuple)) {
        return NULL;
    }
    Py_buffer views[15];
    CallColumns c;
    Digests d = {0};
    if (get_views(tuple, 15, views) == 0 && columns_over(views, &c) == 0 && compute_digests(self, &c, &d) == 0) {
        size_t n = c.ncalls;
        result = Py_BuildValue("(NNN)", as_bytes(d.subtree, n * 16), as_bytes(d.own, n * 16), as_bytes(d.lines, n * 16));
    }
    release_views(views, 15);
    digests_free(&d);
    return result;
}

/* export(columns, digests, line events) -> what decode returns */
static PyObject *
decoder_export(DecoderObject *self, PyObject *args)
{
    (void)self;
    PyObject *columns, *digests, *result = NULL;
    unsigned long long line_events;
    if (!PyArg_ParseTuple(args, "OOK", &columns, &digests, &line_events)) {
        return NULL;
    }
    Py_buffer views[15], lanes[3];
    CallColumns c;
    memset(lanes, 0, sizeof(lanes));
    int ok = get_views(columns, 15, views) == 0 && columns_over(views, &c) == 0 && get_views(digests, 3, lanes) == 0;
    if (ok && check_per_call(lanes, (const size_t[]){16, 16, 16}, 3, c.ncalls) == 0) {
        Digests d = {lanes[0].buf, lanes[1].buf, lanes[2].buf};
        result = export_columns(&c, &d, line_events);
    }
    release_views(views, 15);
    release_views(lanes, 3);
    return result;
}

static void
decoder_dealloc(DecoderObject *self)
{
    for (size_t k = 0; k < self->nfuncs; k++) {
        PyMem_Free(self->funcs[k].lines);
        PyMem_Free(self->funcs[k].dense);
    }
    PyMem_Free(self->funcs);
    PyMem_Free(self->values);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Decoder(): definitions are added as the trace's records are read (define, define_value). */
static PyObject *
decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)args;
    (void)kwargs;
    return type->tp_alloc(type, 0);
}

static int
grow(void **data, size_t *count, size_t needed, size_t item)
{
    if (needed <= *count) {
        return 0;
    }
    size_t cap = *count ? *count : 64;
    while (cap < needed) {
        cap *= 2;
    }
    char *grown = PyMem_Realloc(*data, cap * item);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(grown + *count * item, 0, (cap - *count) * item);
    *data = grown;
    *count = cap;
    return 0;
}

/* define(function id, first line, code lines: tuple of int, hash) */
static PyObject *
decoder_define(DecoderObject *self, PyObject *args)
{
    unsigned int id;
    long long first;
    PyObject *lines;
    unsigned long long hash;
    unsigned int nparams = 0;
    if (!PyArg_ParseTuple(args, "ILO!K|I", &id, &first, &PyTuple_Type, &lines, &hash, &nparams)) {
        return NULL;
    }
    if (id >= (1u << 28)) {
        return corrupt("function id %u out of range", id);
    }
    if (grow((void **)&self->funcs, &self->nfuncs, (size_t)id + 1, sizeof(FuncDef)) < 0) {
        return NULL;
    }
    FuncDef *f = &self->funcs[id];
    size_t count = (size_t)PyTuple_GET_SIZE(lines);
    int32_t *table = PyMem_Malloc((count ? count : 1) * sizeof(int32_t));
    if (table == NULL) {
        return PyErr_NoMemory();
    }
    for (size_t k = 0; k < count; k++) {
        table[k] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(lines, (Py_ssize_t)k));
    }
    if (PyErr_Occurred()) {
        PyMem_Free(table);
        return NULL;
    }
    int sorted = 1;
    for (size_t k = 1; k < count; k++) {
        sorted &= table[k - 1] <= table[k];
    }
    size_t span = count && sorted ? (size_t)((int64_t)table[count - 1] - table[0] + 1) : 0;
    uint32_t *dense = NULL;
    if (span && span <= MAX_DENSE) {
        dense = PyMem_Malloc(span * sizeof(uint32_t));
        if (dense == NULL) {
            PyMem_Free(table);
            return PyErr_NoMemory();
        }
        for (size_t k = 0; k < span; k++) {
            dense[k] = (uint32_t)(FALLBACK_BASE + (int64_t)table[0] + (int64_t)k - first);
        }
        for (size_t k = count; k-- > 0;) {  /* the first of equal code lines, as the binary search finds it */
            dense[table[k] - table[0]] = (uint32_t)k;
        }
    }
    PyMem_Free(f->lines);
    PyMem_Free(f->dense);
    f->defined = 1;
    f->first = first;
    f->hash = hash;
    f->nparams = nparams;
    f->lines = table;
    f->nlines = count;
    f->dense = dense;
    f->ndense = dense ? span : 0;
    Py_RETURN_NONE;
}

/* Keeps `hash` as the hash of value `id`: 0, or -1 with an error set (an id no value record defines). */
static int
define_one(DecoderObject *self, unsigned long long id, unsigned long long hash)
{
    if (id > UINT32_MAX || (id & INLINE_INT)) {
        corrupt("value id %llu is not a defined value's", id);
        return -1;
    }
    if (grow((void **)&self->values, &self->nvalues, (size_t)id + 1, sizeof(uint64_t)) < 0) {
        return -1;
    }
    self->values[id] = hash;
    return 0;
}

/* define_value(value id, hash) */
static PyObject *
decoder_define_value(DecoderObject *self, PyObject *args)
{
    unsigned long long id, hash;
    if (!PyArg_ParseTuple(args, "KK", &id, &hash)) {
        return NULL;
    }
    return define_one(self, id, hash) < 0 ? NULL : Py_NewRef(Py_None);
}

/* define_values(ids, hashes): define_value of each pair, the ids and hashes two buffers of uint64 (array("Q")): a
 * suite's tens of thousands of values in one call. */
static PyObject *
decoder_define_values(DecoderObject *self, PyObject *args)
{
    Py_buffer ids, hashes;
    if (!PyArg_ParseTuple(args, "y*y*", &ids, &hashes)) {
        return NULL;
    }
    int failed = ids.len % 8 || hashes.len != ids.len;
    if (failed) {
        PyErr_SetString(PyExc_ValueError, "define_values: two buffers of as many uint64");
    }
    const uint64_t *id = ids.buf, *hash = hashes.buf;
    for (size_t k = 0; !failed && k < (size_t)ids.len / 8; k++) {
        failed = define_one(self, id[k], hash[k]) < 0;
    }
    PyBuffer_Release(&ids);
    PyBuffer_Release(&hashes);
    return failed ? NULL : Py_NewRef(Py_None);
}

static PyMethodDef decoder_methods[] = {
    {"define", (PyCFunction)decoder_define, METH_VARARGS, "define(function id, first line, code lines, hash[, parameter count])"},
    {"define_value", (PyCFunction)decoder_define_value, METH_VARARGS, "define_value(value id, hash)"},
    {"define_values", (PyCFunction)decoder_define_values, METH_VARARGS, "define_values(ids, hashes): define_value of each pair (uint64 buffers)"},
    {"decode", (PyCFunction)decoder_decode, METH_VARARGS, "decode(words, with_yields=True) -> columns of one entry point (see events.Columns)"},
    {"index", (PyCFunction)decoder_index, METH_VARARGS, "index(words) -> (digest, line events, calls, edges, functions) of one entry point (see events.index_entry)"},
    {"tokens", (PyCFunction)decoder_tokens, METH_VARARGS, "tokens(words, with_yields=True) -> phase 1 alone (see events.read_tokens)"},
    {"columns", (PyCFunction)decoder_columns, METH_VARARGS, "columns(tokens) -> phase 2 alone (see events.build_columns)"},
    {"digests", (PyCFunction)decoder_digests, METH_VARARGS, "digests(columns) -> phase 3 alone (see events.compute_digests)"},
    {"export", (PyCFunction)decoder_export, METH_VARARGS, "export(columns, digests, line events) -> phase 4 alone (see events.export_columns)"},
    {NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.traces._decode.Decoder",
    .tp_basicsize = sizeof(DecoderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = decoder_new,
    .tp_dealloc = (destructor)decoder_dealloc,
    .tp_methods = decoder_methods,
};

/* -- walking two decoded entry points ----------------------------------------
 * walk(old, new, pairs): the pairs of calls below each (o, n) of pairs, itself included, that need a comparison
 * of their own, in depth-first order: subtrees with equal digests are skipped, and calls that are
 * "quietly alike" (own digests equal; lines equal or not all recorded on a side) are passed
 * through to their children, which pair one to one. old and new are tuples of buffers:
 * (digests, own digests, line digests, complete, child_start, children). Same as
 * histeg.compare.calls._walk_python. */

typedef struct {
    Py_buffer digests, own, lines, complete, child_start, children;
    size_t ncalls;
} Side;

static void
side_release(Side *side)
{
    Py_buffer *all[] = {&side->digests, &side->own, &side->lines, &side->complete, &side->child_start, &side->children};
    for (size_t k = 0; k < 6; k++) {
        if (all[k]->obj != NULL) {
            PyBuffer_Release(all[k]);
        }
    }
}

static int
side_get(PyObject *tuple, Side *side)
{
    memset(side, 0, sizeof(Side));
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != 6) {
        PyErr_SetString(PyExc_TypeError, "walk: a side is a tuple of 6 buffers");
        return -1;
    }
    Py_buffer *all[] = {&side->digests, &side->own, &side->lines, &side->complete, &side->child_start, &side->children};
    for (Py_ssize_t k = 0; k < 6; k++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(tuple, k), all[k], PyBUF_SIMPLE) < 0) {
            side_release(side);
            return -1;
        }
    }
    side->ncalls = (size_t)side->complete.len;
    if ((size_t)side->digests.len != 16 * side->ncalls || (size_t)side->own.len != 16 * side->ncalls
        || (size_t)side->lines.len != 16 * side->ncalls || (size_t)side->child_start.len != 4 * (side->ncalls + 1)) {
        PyErr_SetString(PyExc_ValueError, "walk: columns of different lengths");
        side_release(side);
        return -1;
    }
    return 0;
}

/* The comparison's walk over two decoded calls; long on purpose: it runs once per compared pair of entry
 * points over millions of calls, and its loop shares the two sides' columns and cursors. */
static PyObject *
decode_walk(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *old_tuple, *new_tuple, *starts;
    if (!PyArg_ParseTuple(args, "OOO", &old_tuple, &new_tuple, &starts)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(starts, "walk: pairs must be a sequence of (old call, new call)");
    if (seq == NULL) {
        return NULL;
    }
    Side a, b;
    if (side_get(old_tuple, &a) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    if (side_get(new_tuple, &b) < 0) {
        side_release(&a);
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *found = PyList_New(0);
    Vec stack = VEC(Pair);
    Py_ssize_t count_starts = PySequence_Fast_GET_SIZE(seq);
    if (found == NULL || vec_reserve(&stack, (size_t)count_starts) < 0) {
        Py_CLEAR(found);
        goto done;
    }
    for (Py_ssize_t k = count_starts; k-- > 0;) {  /* the first pair on top: walked first */
        unsigned int o0, n0;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "II", &o0, &n0)) {
            Py_CLEAR(found);
            goto done;
        }
        if (o0 >= a.ncalls || n0 >= b.ncalls) {
            PyErr_SetString(PyExc_IndexError, "walk: no such call");
            Py_CLEAR(found);
            goto done;
        }
        Pair start = {o0, n0};
        AT(stack, Pair, stack.len++) = start;
    }
    const char *da = a.digests.buf, *db = b.digests.buf, *oa = a.own.buf, *ob = b.own.buf, *la = a.lines.buf, *lb = b.lines.buf;
    const uint8_t *ca = a.complete.buf, *cb = b.complete.buf;
    const uint32_t *sa = a.child_start.buf, *sb = b.child_start.buf, *ka = a.children.buf, *kb = b.children.buf;
    while (stack.len) {
        Pair p = AT(stack, Pair, --stack.len);
        uint32_t o = p.call, n = p.value;
        if (memcmp(da + 16 * (size_t)o, db + 16 * (size_t)n, 16) == 0) {
            continue;
        }
        int alike = memcmp(oa + 16 * (size_t)o, ob + 16 * (size_t)n, 16) == 0
            && (!(ca[o] && cb[n]) || memcmp(la + 16 * (size_t)o, lb + 16 * (size_t)n, 16) == 0);
        if (!alike) {
            PyObject *item = Py_BuildValue("(II)", o, n);
            if (item == NULL || PyList_Append(found, item) < 0) {
                Py_XDECREF(item);
                Py_CLEAR(found);
                goto done;
            }
            Py_DECREF(item);
            continue;
        }
        uint32_t count = sa[o + 1] - sa[o];
        if (count != sb[n + 1] - sb[n] || vec_reserve(&stack, count) < 0) {  /* own digests cover the children's count */
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "walk: alike calls with different numbers of children");
            }
            Py_CLEAR(found);
            goto done;
        }
        for (uint32_t k = count; k-- > 0;) {
            Pair child = {ka[sa[o] + k], kb[sb[n] + k]};
            if (memcmp(da + 16 * (size_t)child.call, db + 16 * (size_t)child.value, 16) != 0) {
                AT(stack, Pair, stack.len++) = child;
            }
        }
    }
done:
    vec_free(&stack);
    side_release(&a);
    side_release(&b);
    Py_DECREF(seq);
    return found;
}

/* -- value records ---------------------------------------------------------
 * A suite's trace defines hundreds of thousands of values, each a V record of a few fields
 * (records.parse_record is the reference): read in a run here, kept as encoded by the caller. */

/* An unsigned LEB128 at data[*pos:n]; 0 when cut short (or longer than 64 bits). */
static inline int
read_varint(const uint8_t *data, size_t n, size_t *pos, uint64_t *value)
{
    uint64_t result = 0;
    for (unsigned shift = 0; *pos < n && shift < 64; shift += 7) {
        uint8_t byte = data[(*pos)++];
        result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *value = result;
            return 1;
        }
    }
    return 0;
}

/* -- value digests ----------------------------------------------------------
 * records.value_digest: the first 8 bytes (little-endian) of BLAKE2b with an 8-byte digest (RFC 7693) of the value's
 * type name, then " " and its repr when it has one. hashlib does it too, but one Python call per value record was a
 * tenth of sealing a dense suite's trace. Held to hashlib by tests/tracing/test_value_hashes.py. */

static const uint64_t BLAKE2B_IV[8] = {
    0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
    0x510e527fade682d1ull, 0x9b05688c2b3e6c1full, 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull,
};

static const uint8_t BLAKE2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

typedef struct {
    uint64_t h[8], counter;
    uint8_t block[128];
    size_t filled;
} Blake2b;

static inline uint64_t
rotr64(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64 - n));
}

#define B2_G(a, b, c, d, x, y)         \
    do {                               \
        a = a + b + (x);               \
        d = rotr64(d ^ a, 32);         \
        c = c + d;                     \
        b = rotr64(b ^ c, 24);         \
        a = a + b + (y);               \
        d = rotr64(d ^ a, 16);         \
        c = c + d;                     \
        b = rotr64(b ^ c, 63);         \
    } while (0)

static void
blake2b_compress(Blake2b *s, int last)
{
    uint64_t m[16], v[16];
    for (int i = 0; i < 16; i++) {
        uint64_t word = 0;
        for (int j = 7; j >= 0; j--) {
            word = (word << 8) | s->block[8 * i + j];
        }
        m[i] = word;
    }
    for (int i = 0; i < 8; i++) {
        v[i] = s->h[i];
        v[i + 8] = BLAKE2B_IV[i];
    }
    v[12] ^= s->counter;  /* the counter's high word stays 0: a value record is far below 2**64 bytes */
    if (last) {
        v[14] = ~v[14];
    }
    for (int r = 0; r < 12; r++) {
        const uint8_t *p = BLAKE2B_SIGMA[r];
        B2_G(v[0], v[4], v[8], v[12], m[p[0]], m[p[1]]);
        B2_G(v[1], v[5], v[9], v[13], m[p[2]], m[p[3]]);
        B2_G(v[2], v[6], v[10], v[14], m[p[4]], m[p[5]]);
        B2_G(v[3], v[7], v[11], v[15], m[p[6]], m[p[7]]);
        B2_G(v[0], v[5], v[10], v[15], m[p[8]], m[p[9]]);
        B2_G(v[1], v[6], v[11], v[12], m[p[10]], m[p[11]]);
        B2_G(v[2], v[7], v[8], v[13], m[p[12]], m[p[13]]);
        B2_G(v[3], v[4], v[9], v[14], m[p[14]], m[p[15]]);
    }
    for (int i = 0; i < 8; i++) {
        s->h[i] ^= v[i] ^ v[i + 8];
    }
}

static void
blake2b_start(Blake2b *s)
{
    memcpy(s->h, BLAKE2B_IV, sizeof s->h);
    s->h[0] ^= 0x01010000ull | 8u;  /* depth 1, fanout 1, no key, an 8-byte digest */
    s->counter = 0;
    s->filled = 0;
}

static void
blake2b_update(Blake2b *s, const uint8_t *data, size_t size)
{
    while (size > 0) {
        if (s->filled == sizeof s->block) {  /* a full block is compressed once more input shows it is not the last */
            s->counter += sizeof s->block;
            blake2b_compress(s, 0);
            s->filled = 0;
        }
        size_t take = sizeof s->block - s->filled < size ? sizeof s->block - s->filled : size;
        memcpy(s->block + s->filled, data, take);
        s->filled += take;
        data += take;
        size -= take;
    }
}

static uint64_t
blake2b_finish(Blake2b *s)
{
    s->counter += s->filled;
    memset(s->block + s->filled, 0, sizeof s->block - s->filled);
    blake2b_compress(s, 1);
    return s->h[0];  /* the digest's 8 bytes are h[0] in little-endian order: int.from_bytes(digest, "little") */
}

/* records.value_digest of a record's type name and repr (repr_start UINT64_MAX: none). */
static uint64_t
value_digest(const uint8_t *data, const uint64_t *span)
{
    Blake2b state;
    blake2b_start(&state);
    blake2b_update(&state, data + span[1], (size_t)(span[2] - span[1]));
    if (span[3] != UINT64_MAX) {
        blake2b_update(&state, (const uint8_t *)" ", 1);
        blake2b_update(&state, data + span[3], (size_t)(span[4] - span[3]));
    }
    return blake2b_finish(&state);
}

/* digest(data) -> records.bytes_hash(data), for the tests that hold this BLAKE2b to hashlib's. */
static PyObject *
decode_digest(PyObject *module, PyObject *args)
{
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) {
        return NULL;
    }
    Blake2b state;
    blake2b_start(&state);
    blake2b_update(&state, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(blake2b_finish(&state));
}

/* The V record whose fields start at *at (after its tag): its id and the spans value_records gives; *at past it.
 * 0 when it is cut short. */
static int
read_value_record(const uint8_t *data, size_t n, size_t *at, uint64_t *id, uint64_t *span)
{
    uint64_t size;
    if (!read_varint(data, n, at, id)) {
        return 0;
    }
    span[0] = *at;
    if (!read_varint(data, n, at, &size) || size > n - *at) {
        return 0;
    }
    span[1] = *at;
    span[2] = *at += size;
    if (*at >= n) {
        return 0;
    }
    if (data[(*at)++]) {
        if (!read_varint(data, n, at, &size) || size > n - *at) {
            return 0;
        }
        span[3] = *at;
        span[4] = *at += size;
    }
    else {
        span[3] = span[4] = UINT64_MAX;
    }
    return 1;
}

/* What read_records gathers, per V record: its id and records.value_digest, then without a splitter its five spans (the
 * offsets of its fields after the id, of its type name (start, end) and of its repr (start, end; both 2**64 - 1:
 * none)), with one the records' bytes one after the other and where each one's fields start in them. */
typedef struct {
    Vec ids, spans, digests, values, fields;
} ValueRun;

/* The V records of `data` from `pos` on, and with a splitter the C records among them (each fed as feed() does), up
 * to the first other record or one cut short, where *end is left; -1 with an error set. */
static int
read_records(SplitterObject *splitter, const uint8_t *data, size_t n, size_t pos, ValueRun *run, size_t *end)
{
    *end = pos;
    while (pos < n) {
        size_t at = pos + 1;
        if (data[pos] == REC_VALUE) {
            uint64_t id, span[5];
            if (!read_value_record(data, n, &at, &id, span)) {
                break;
            }
            uint64_t digest = value_digest(data, span), field = run->values.len + (span[0] - pos);
            if (vec_push(&run->ids, &id, 1) < 0 || vec_push(&run->digests, &digest, 1) < 0
                || (splitter == NULL ? vec_push(&run->spans, span, 5) < 0
                                     : vec_push(&run->fields, &field, 1) < 0 || vec_push(&run->values, data + pos, at - pos) < 0)) {
                return -1;
            }
        }
        else if (data[pos] == REC_CHUNK && splitter != NULL) {
            uint64_t thread, size;
            if (!read_varint(data, n, &at, &thread) || !read_varint(data, n, &at, &size) || size > n - at) {
                break;
            }
            if (thread >= MAX_THREADS) {
                corrupt("thread index %llu out of range", (unsigned long long)thread);
                return -1;
            }
            if (feed_words(splitter, (unsigned int)thread, (const uint16_t *)(data + at), (size_t)size) < 0) {
                return -1;
            }
            at += size;
        }
        else {
            break;
        }
        pos = *end = at;
    }
    return 0;
}

/* read_records over `args` (data, pos; a negative pos: at the end), its result built, the buffer released:
 * value_records' (end, ids, spans, digests) without a splitter, records' (end, values, ids, fields, digests) with one. */
static PyObject *
records_of(SplitterObject *splitter, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "y*n", &view, &start)) {
        return NULL;
    }
    size_t n = (size_t)view.len, end;
    ValueRun run = {VEC(uint64_t), VEC(uint64_t), VEC(uint64_t), VEC(uint8_t), VEC(uint64_t)};
    PyObject *result = NULL;
    if (read_records(splitter, view.buf, n, start < 0 ? n : (size_t)start, &run, &end) == 0) {
        PyObject *ids = as_bytes(run.ids.data, run.ids.len * 8), *digests = as_bytes(run.digests.data, run.digests.len * 8);
        result = splitter == NULL
            ? Py_BuildValue("(nNNN)", (Py_ssize_t)end, ids, as_bytes(run.spans.data, run.spans.len * 8), digests)
            : Py_BuildValue("(nNNNN)", (Py_ssize_t)end, as_bytes(run.values.data, run.values.len), ids,
                            as_bytes(run.fields.data, run.fields.len * 8), digests);
    }
    vec_free(&run.ids);
    vec_free(&run.spans);
    vec_free(&run.digests);
    vec_free(&run.values);
    vec_free(&run.fields);
    PyBuffer_Release(&view);
    return result;
}

/* value_records(data, pos) -> (end, ids, spans, digests): the V records from `pos` on, up to the first other
 * record or one cut short (at `end`). ids: uint64 per record; spans: five uint64 per record (see ValueRun);
 * digests: records.value_digest per record. */
static PyObject *
decode_value_records(PyObject *module, PyObject *args)
{
    (void)module;
    return records_of(NULL, args);
}

/* records(data, pos) -> (end, values, ids, fields, digests): the V and C records from `pos` on, up to the first other
 * record or one cut short (at `end`), in one call: a lexer's suite writes tens of thousands of small chunks, each
 * between runs of value records, and reading them one Python call at a time was most of its sealing. Every chunk is
 * fed as feed() does; values: the V records' bytes, in their order; ids and digests: uint64 per V record, as
 * value_records gives them; fields: uint64 per V record, the offset in `values` where its fields start. */
static PyObject *
splitter_records(SplitterObject *self, PyObject *args)
{
    return records_of(self, args);
}

static PyMethodDef module_methods[] = {
    {"value_records", decode_value_records, METH_VARARGS,
     "value_records(data, pos) -> (end, ids, spans, digests) of the V records from pos on"},
    {"digest", decode_digest, METH_VARARGS, "digest(data) -> records.bytes_hash(data)"},
    {"walk", decode_walk, METH_VARARGS, "walk(old, new, pairs) -> [(o, n)] calls below the pairs needing a comparison, depth first"},
    {NULL},
};

static struct PyModuleDef decode_module = {
    PyModuleDef_HEAD_INIT, "histeg.traces._decode", "Event streams split by entry point and decoded, in C (see events.py).", -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__decode(void)
{
    if (PyType_Ready(&WordsType) < 0 || PyType_Ready(&SplitterType) < 0 || PyType_Ready(&DecoderType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&decode_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Splitter", (PyObject *)&SplitterType) < 0
        || PyModule_AddObjectRef(module, "Decoder", (PyObject *)&DecoderType) < 0
        || PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
