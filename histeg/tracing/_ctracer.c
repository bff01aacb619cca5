/* The collector's hot path in C: sys.monitoring callbacks that write the
 * event streams described in format.py, word for word as monitor.py does.
 *
 * Why C: a Python callback costs about 0.3 us before it does anything, and a
 * test suite makes millions of calls and tens of millions of line events. A
 * builtin method called through vectorcall costs a few tens of ns.
 *
 * What stays in Python (called from here, rarely): deciding whether a code
 * object is instrumented (monitor.Collector._instrument), opening a thread's
 * stream, shipping a full buffer to the writer, and abstracting values that
 * are not small ints and whose type is not cached yet (ValueIds.id_of).
 *
 * Signals stay the program's: see "signals" below.
 *
 * Invariants: every code object in the function table is kept alive by the
 * Python collector's own table, so its address is a stable key. Callbacks run
 * with the GIL held; calls back into Python happen only at the points above.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "_grow.h"
#include "_interpreter.h"
#include "_keymemo.h"
#include "_objectmemo.h"
#include "_typefacts.h"

/* Format constants, read from histeg.tracing.format at import. */
static unsigned int OP_CALL, CALL_ROOT, CALL_GEN, CALL_BARE, OP_RETURN, OP_RETURN_BARE, OP_RAISE, OP_YIELD, OP_RESUME, OP_LINES_OFF, OP_LINES_ON;
static unsigned long long INLINE_INT, INT_BIAS, REC_VALUE;
#define NO_VALUE 0u
/* The Tracer's constructor and bindings as native.py calls them: a build from another histeg is not used. */
#define INTERFACE 14  /* native.INTERFACE: 3 adds keyed() and keyed_id(), 4 the names checked for secrets in the keyed tables and untracked(),
                      * 5 the classes keyed by their names and what interns a new value in the keyed tables, and id_of(),
                      * 6 slots as (name, getter, member) in the layouts, signals held, SEES_INTERNALS,
                      * 7 line_cap, 8 the types no key caches in the keyed tables, 9 values_to() and no cap in the
                      * keyed tables (value records and long texts are made in C), 10 the container subclasses and
                      * content bases in the keyed tables, 11 event hooks called through their vectorcall slot,
                      * 12 LineSet, the line coverage tool's LINE callback, 13 its INSTRUCTION callback (offsets),
                      * 14 hear_files, the audit hook of histeg.tracing.seen_files */
static Py_ssize_t CHUNK_WORDS;

/* -- signals ---------------------------------------------------------------
 * Untraced, a signal's Python handler runs at the program's next check (a call, a loop's jump back), and what it
 * raises is raised there. Run inside histeg's own Python code, called from a callback, it would raise into histeg:
 * where a value is abstracted the error is histeg's and cleared, so the program never sees its exception (a
 * timeout lost); elsewhere it surfaces at another place. So a callback's calls into Python hold the thread's signals
 * (pthread_sigmask: they wait in the kernel and reach the program once released, as at its next instruction), and a
 * handler already due is never run inside them: a value that needs Python is then unknown (NO_VALUE), a buffer
 * waits to be shipped, and a call that must be made runs the handler first, where it is due, so that its exception
 * is the program's at that event (PyErr_CheckSignals). Faults the CPU raises (SIGSEGV, ...) are never held. */

static sigset_t HELD_SIGNALS;

typedef struct {
    sigset_t saved;
    int held;
} Held;

static void
release_signals(Held *h)
{
    if (h->held) {
        pthread_sigmask(SIG_SETMASK, &h->saved, NULL);
        h->held = 0;
    }
}

/* Holds the thread's signals for a call into Python that can do without: 0, or 1 (nothing held) when a handler is
 * due, and the call must not be made. */
static int
hold_signals(Held *h)
{
    h->held = pthread_sigmask(SIG_BLOCK, &HELD_SIGNALS, &h->saved) == 0;
    if (histeg_signal_due()) {
        release_signals(h);
        return 1;
    }
    return 0;
}

/* Holds the thread's signals for a call into Python that must be made: a handler due runs first, here, and what it
 * raises is the program's (-1, an error set, nothing held). */
static int
hold_signals_for_call(Held *h)
{
    while (hold_signals(h)) {
        if (PyErr_CheckSignals() < 0) {
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject *code;     /* borrowed: the Python collector keeps it alive */
    PyObject *names;    /* parameter names (tuple), strong */
    Py_ssize_t nparams;
    uint32_t func_id;
    int suspends;       /* generator or coroutine */
    uint64_t epoch;     /* entry point in which `spent` and `lines` count */
    uint64_t spent;     /* calls in that entry point */
    uint64_t lines;     /* line events in that entry point */
    int off;            /* its line events are off until the next entry point (a budget spent) */
    uint64_t redact;    /* parameters (bit i) and return value (bit 63) recorded through `redacted` */
    PyObject *redacted; /* value -> id of its keyed digest (strong): secrets compare, never reach the trace */
} FuncInfo;

typedef struct {
    PyObject_HEAD
    FuncInfo *fi;
    uint32_t call_id;
    void *frame_key;
    struct TStateObject *owner;   /* borrowed: states live as long as the tracer's list */
} GenCallObject;

typedef struct {
    PyObject *code;
    FuncInfo *fi;
    GenCallObject *gen;  /* strong, NULL for plain functions */
} StackItem;

typedef struct TStateObject {
    PyObject_HEAD
    long index;
    uint16_t *buf;
    Py_ssize_t len, cap;
    StackItem *stack;
    Py_ssize_t depth, scap;
    int diverting;      /* > 0 while histeg's own repr calls run: their events are dropped */
    size_t told;        /* how many of the tracer's `lines_off` its stream has an OFF marker of, in... */
    uint64_t told_epoch;  /* ...this `off_epoch` (another: none) */
} TStateObject;

enum { L_CACHED, L_REPR, L_ITEMS, L_KEY_LENGTH, L_COUNT };  /* the keyed tables' bounds (K_LIMITS), in this order */

typedef struct {
    PyObject_HEAD
    FuncInfo **table;
    size_t tcap, tcount;
    PyObject *instrument;     /* code -> entry tuple or None */
    PyObject *new_thread;     /* () -> thread index (writes the thread record) */
    PyObject *chunk;          /* (thread index, bytes) */
    PyObject *records;        /* (bytes): takes whole value records (TraceWriter.records); NULL: K_WRITE, one call per value */
    char *vbuf;               /* value records not handed to `records` yet: they go before the next chunk */
    size_t vlen, vcap;
    PyObject *by_type;        /* dict: type -> value id */
    PyObject *by_value;       /* dict: exact str, None, True, False -> value id (filled by ValueIds.id_of) */
    PyObject *value_id;       /* value -> value id */
    PyObject *keys;           /* ValueIds.native_tables(): what keyed_id reads (a tuple; None until keyed() is called) */
    KeyMemo memo;             /* digest of a key -> its id in the keyed tables (emptied with them: keyed(), reset()) */
    KeyMemo secrets;          /* digest of a key -> the id of the secret a value of that key is (emptied as `memo`) */
    TypeFacts facts;          /* what `keys` and `by_type` said of a class (emptied when either is bound again) */
    ObjectMemo objects;       /* a program's object's address and fields -> its id (emptied as `facts`) */
    uint64_t tables_epoch;    /* counts the times the tables were bound again (and all of the above emptied) */
    PyObject *no_key_streaks; /* dict: a program's class -> how many of its last objects had no key (skip_key) */
    Py_ssize_t limits[L_COUNT];  /* the bounds the keyed tables give, read once by keyed() */
    PyObject *switch_lines;   /* (code, on): line events of a code object on or off */
    FuncInfo **lines_off;     /* functions whose line budget in this entry point is spent */
    size_t noff, offcap;
    uint64_t off_epoch;       /* counts the times `lines_off` was emptied (every function's lines on again) */
    unsigned long long line_budget;
    unsigned long long line_cap;  /* line events per function per entry point (0: no bound) */
    struct SuspendedTable {   /* frame address -> GenCall (strong), open addressing with tombstones */
        void **keys;
        GenCallObject **gens;
        size_t cap, used, live;  /* used counts live entries and tombstones */
    } suspended;
    int ready;                /* 0 once cleared by the GC */
    PyObject *states;         /* list of TState */
    PyObject *states_by_tid;  /* dict: thread state id -> TState */
    PyObject *disable;
    uint64_t last_tid;
    pthread_t last_pthread;   /* fast check of the thread whose state is cached (no thread-local lookup) */
    TStateObject *last_state;
    int capture;
    unsigned long long budget;
    uint64_t epoch;
    unsigned int label;
    uint32_t gen_ids;
    int *gc_young;             /* the collector's schedule (gc_mark, gc_settle); NULL without internals */
    Py_ssize_t *gc_runs[3];
} TracerObject;

static PyTypeObject GenCallType, TStateType, TracerType;

/* -- suspended generator calls, keyed by their frame's address ------------------
 * A generator-heavy program yields and resumes millions of times: a C table
 * keyed by the address saves the int objects and dict operations of a dict. */

#define TOMBSTONE ((void *)1)

static size_t
susp_slot(const struct SuspendedTable *t, void *key)
{
    uint64_t h = ((uint64_t)(uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (t->cap - 1);
}

static int
susp_grow(struct SuspendedTable *t)
{
    size_t cap = t->cap ? t->cap : 64;
    while ((t->live + 1) * 2 > cap) {
        cap *= 2;
    }
    void **keys = PyMem_Calloc(cap, sizeof(void *));
    GenCallObject **gens = PyMem_Calloc(cap, sizeof(GenCallObject *));
    if (keys == NULL || gens == NULL) {
        PyMem_Free(keys);
        PyMem_Free(gens);
        PyErr_NoMemory();
        return -1;
    }
    struct SuspendedTable fresh = {keys, gens, cap, 0, 0};
    for (size_t i = 0; i < t->cap; i++) {
        if (t->keys[i] != NULL && t->keys[i] != TOMBSTONE) {
            size_t j = susp_slot(&fresh, t->keys[i]);
            while (fresh.keys[j] != NULL) {
                j = (j + 1) & (cap - 1);
            }
            fresh.keys[j] = t->keys[i];
            fresh.gens[j] = t->gens[i];
            fresh.used++;
            fresh.live++;
        }
    }
    PyMem_Free(t->keys);
    PyMem_Free(t->gens);
    *t = fresh;
    return 0;
}

/* Takes a new reference to gen; replaces (and releases) an entry with the same key. */
static int
susp_put(struct SuspendedTable *t, void *key, GenCallObject *gen)
{
    if ((t->used + 1) * 2 > t->cap && susp_grow(t) < 0) {
        return -1;
    }
    size_t mask = t->cap - 1, i = susp_slot(t, key), free_slot = (size_t)-1;
    for (;; i = (i + 1) & mask) {
        void *k = t->keys[i];
        if (k == NULL) {
            break;
        }
        if (k == TOMBSTONE) {
            if (free_slot == (size_t)-1) {
                free_slot = i;
            }
            continue;
        }
        if (k == key) {
            Py_INCREF(gen);
            Py_SETREF(t->gens[i], gen);
            return 0;
        }
    }
    if (free_slot == (size_t)-1) {
        free_slot = i;
        t->used++;
    }
    t->keys[free_slot] = key;
    t->gens[free_slot] = (GenCallObject *)Py_NewRef(gen);
    t->live++;
    return 0;
}

/* Removes the entry of key and returns its reference (NULL when absent, without an error). */
static GenCallObject *
susp_pop(struct SuspendedTable *t, void *key)
{
    if (t->cap == 0) {
        return NULL;
    }
    size_t mask = t->cap - 1;
    for (size_t i = susp_slot(t, key);; i = (i + 1) & mask) {
        void *k = t->keys[i];
        if (k == NULL) {
            return NULL;
        }
        if (k == key) {
            GenCallObject *gen = t->gens[i];
            t->keys[i] = TOMBSTONE;
            t->gens[i] = NULL;
            t->live--;
            return gen;
        }
    }
}

static void
susp_clear(struct SuspendedTable *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        if (t->keys[i] != NULL && t->keys[i] != TOMBSTONE) {
            Py_CLEAR(t->gens[i]);
        }
    }
    PyMem_Free(t->keys);
    PyMem_Free(t->gens);
    t->keys = NULL;
    t->gens = NULL;
    t->cap = t->used = t->live = 0;
}

/* -- thread states -------------------------------------------------------- */

static void
tstate_dealloc(TStateObject *self)
{
    for (Py_ssize_t i = 0; i < self->depth; i++) {
        Py_XDECREF(self->stack[i].gen);
    }
    PyMem_Free(self->stack);
    PyMem_Free(self->buf);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static inline int
buf_reserve(TStateObject *st, Py_ssize_t more)
{
    if (st->len + more <= st->cap) {
        return 0;
    }
    void *buf = st->buf;
    int grown = histeg_grow(&buf, &st->cap, st->len + more, 1024, sizeof(uint16_t));
    st->buf = buf;
    return grown;
}

static inline void
put_id(uint16_t *at, unsigned long long id)
{
    at[0] = (uint16_t)(id & 0xFFFF);
    at[1] = (uint16_t)(id >> 16);
}

static int
stack_push(TStateObject *st, PyObject *code, FuncInfo *fi, GenCallObject *gen)
{
    if (st->depth == st->scap) {
        Py_ssize_t cap = st->scap ? st->scap * 2 : 64;
        StackItem *stack = PyMem_Realloc(st->stack, (size_t)cap * sizeof(StackItem));
        if (stack == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        st->stack = stack;
        st->scap = cap;
    }
    StackItem *item = &st->stack[st->depth++];
    item->code = code;
    item->fi = fi;
    item->gen = gen;
    Py_XINCREF(gen);
    return 0;
}

/* -- value records -----------------------------------------------------------
 * A value met for the first time is defined by a record, written here as format.TraceWriter.value writes it and
 * handed to the writer in batches, before the next chunk is shipped: every value a chunk names is defined before it,
 * without a call into Python per value. */

#define VALUES_BATCH 65536  /* bytes of value records handed to the writer at once, at most (about) */

static PyObject *CRC32, *ADLER32;  /* zlib's, for the digest of a long text (values._digest) */

static int
vbuf_put(TracerObject *self, const void *data, size_t size)
{
    if (self->vlen + size > self->vcap) {
        size_t cap = self->vcap ? self->vcap : 4096;
        while (cap < self->vlen + size) {
            cap *= 2;
        }
        char *grown = PyMem_Realloc(self->vbuf, cap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->vbuf = grown;
        self->vcap = cap;
    }
    memcpy(self->vbuf + self->vlen, data, size);
    self->vlen += size;
    return 0;
}

/* format.varint: unsigned LEB128. */
static int
vbuf_varint(TracerObject *self, unsigned long long value)
{
    unsigned char bytes[10];
    size_t n = 0;
    while (value > 0x7F) {
        bytes[n++] = (unsigned char)((value & 0x7F) | 0x80);
        value >>= 7;
    }
    bytes[n++] = (unsigned char)value;
    return vbuf_put(self, bytes, n);
}

/* A str's UTF-8 as format.text encodes it (surrogates passed through): the str's own bytes when it is ASCII, else
 * bytes *owner holds (NULL with an error set when encoding failed). */
static const char *
utf8_of(PyObject *text, Py_ssize_t *size, PyObject **owner)
{
    *owner = NULL;
    if (PyUnicode_IS_ASCII(text)) {
        *size = PyUnicode_GET_LENGTH(text);
        return (const char *)PyUnicode_1BYTE_DATA(text);
    }
    *owner = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
    if (*owner == NULL) {
        return NULL;
    }
    *size = PyBytes_GET_SIZE(*owner);
    return PyBytes_AS_STRING(*owner);
}

/* format.text: the UTF-8 length, then the bytes. */
static int
vbuf_text(TracerObject *self, PyObject *text)
{
    Py_ssize_t size;
    PyObject *owner;
    const char *data = utf8_of(text, &size, &owner);
    if (data == NULL) {
        return -1;
    }
    int failed = vbuf_varint(self, (unsigned long long)size) < 0 || vbuf_put(self, data, (size_t)size) < 0;
    Py_XDECREF(owner);
    return failed ? -1 : 0;
}

/* Hands the value records written so far to the writer, in one call. */
static int
ship_values(TracerObject *self)
{
    if (self->vlen == 0 || self->records == NULL) {
        return 0;
    }
    PyObject *data = PyBytes_FromStringAndSize(self->vbuf, (Py_ssize_t)self->vlen);
    if (data == NULL) {
        return -1;
    }
    self->vlen = 0;
    PyObject *result = PyObject_CallOneArg(self->records, data);
    Py_DECREF(data);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* TraceWriter.value(id, type name, text or None), as a record of the batch (`id` is `fresh`'s value); through `write`
 * (ValueIds' writer, one call per value) when no writer takes whole records. Called with the values held. */
static int
write_value(TracerObject *self, PyObject *write, PyObject *fresh, unsigned long long id, PyObject *name, PyObject *text)
{
    if (self->records == NULL) {
        PyObject *written = PyObject_CallFunctionObjArgs(write, fresh, name, text, NULL);
        Py_XDECREF(written);
        return written == NULL ? -1 : 0;
    }
    size_t mark = self->vlen;
    unsigned char tag = (unsigned char)REC_VALUE, shown = text != Py_None;
    if (vbuf_put(self, &tag, 1) < 0 || vbuf_varint(self, id) < 0 || vbuf_text(self, name) < 0 || vbuf_put(self, &shown, 1) < 0
        || (shown && vbuf_text(self, text) < 0)) {
        self->vlen = mark;  /* never half a record */
        return -1;
    }
    return self->vlen >= VALUES_BATCH ? ship_values(self) : 0;
}

/* values.cap: a text longer than `limit` as its first limit / 2 characters, its length and a digest of its UTF-8
 * (crc32 | adler32 << 32, as values._digest). */
static PyObject *
capped(PyObject *text, Py_ssize_t limit)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (length <= limit) {
        return Py_NewRef(text);
    }
    Py_ssize_t size;
    PyObject *owner, *crc = NULL, *adler = NULL, *prefix = NULL, *result = NULL;
    const char *data = utf8_of(text, &size, &owner);
    if (data == NULL) {
        return NULL;
    }
    PyObject *view = PyMemoryView_FromMemory((char *)data, size, PyBUF_READ);
    if (view != NULL) {
        crc = PyObject_CallOneArg(CRC32, view);
        adler = crc != NULL ? PyObject_CallOneArg(ADLER32, view) : NULL;
        Py_DECREF(view);
    }
    Py_XDECREF(owner);
    if (adler != NULL) {
        unsigned long long low = PyLong_AsUnsignedLongLong(crc), high = PyLong_AsUnsignedLongLong(adler);
        prefix = PyErr_Occurred() ? NULL : PyUnicode_Substring(text, 0, limit / 2);
        if (prefix != NULL) {
            char digest[17];
            unsigned long long both = low | (high << 32);
            for (int at = 15; at >= 0; at--, both >>= 4) {  /* "%016llx", without printf's machinery */
                digest[at] = "0123456789abcdef"[both & 0xF];
            }
            digest[16] = '\0';
            result = PyUnicode_FromFormat("%U%c[len=%zd hash=%s]", prefix, 0x2026, length, digest);
        }
    }
    Py_XDECREF(crc);
    Py_XDECREF(adler);
    Py_XDECREF(prefix);
    return result;
}

/* Hands the thread's events to the writer. `now` 0 (from a callback): not while a signal's handler is due (the events
 * wait in the buffer for the next time); 1 (a thread's events that must precede others, or a call from Python): now,
 * the handler run first (-1 when it raised). */
static int
ship(TracerObject *self, TStateObject *st, int now)
{
    if (st->len == 0 || st->index < 0) {
        return 0;
    }
    Held held;
    if (now ? hold_signals_for_call(&held) < 0 : hold_signals(&held)) {
        return now ? -1 : 0;
    }
    PyObject *data = ship_values(self) < 0 ? NULL : PyBytes_FromStringAndSize((const char *)st->buf, st->len * (Py_ssize_t)sizeof(uint16_t));
    if (data == NULL) {
        release_signals(&held);
        return -1;
    }
    st->len = 0;
    PyObject *result = PyObject_CallFunction(self->chunk, "lN", st->index, data);
    release_signals(&held);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

static TStateObject *other_state(TracerObject *self, int create, pthread_t me);

/* The calling thread's state; NULL without an error when it has none and `create` is 0, or when
 * the tracer was cleared by the GC. Inlined in every callback: most events run on the thread of the
 * event before. pthread_self() reads a register, PyThreadState_Get() a thread-local through the
 * dynamic linker; a thread id reused after its thread ended shares the old stream (calls stay right). */
static inline TStateObject *
current_state(TracerObject *self, int create)
{
    pthread_t me = pthread_self();
    if (self->last_state != NULL && pthread_equal(me, self->last_pthread)) {
        return self->last_state;  /* cleared with states_by_tid by the GC */
    }
    return other_state(self, create, me);
}

static TStateObject *
other_state(TracerObject *self, int create, pthread_t me)
{
    if (self->states_by_tid == NULL) {
        return NULL;
    }
    uint64_t tid = PyThreadState_GetID(PyThreadState_Get());
    if (tid == self->last_tid && self->last_state != NULL) {
        self->last_pthread = me;
        return self->last_state;
    }
    PyObject *key = PyLong_FromUnsignedLongLong(tid);
    if (key == NULL) {
        return NULL;
    }
    TStateObject *st = (TStateObject *)PyDict_GetItemWithError(self->states_by_tid, key);
    if (st == NULL) {
        if (PyErr_Occurred() || !create) {
            Py_DECREF(key);
            return NULL;
        }
        Held held;
        if (hold_signals_for_call(&held) < 0) {
            Py_DECREF(key);
            return NULL;
        }
        PyObject *index = PyObject_CallNoArgs(self->new_thread);
        release_signals(&held);
        if (index == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        long value = PyLong_AsLong(index);
        Py_DECREF(index);
        if (value == -1 && PyErr_Occurred()) {
            Py_DECREF(key);
            return NULL;
        }
        st = PyObject_New(TStateObject, &TStateType);
        if (st == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        st->index = value;
        st->buf = NULL;
        st->len = st->cap = 0;
        st->stack = NULL;
        st->depth = st->scap = 0;
        st->diverting = 0;
        st->told = 0;
        st->told_epoch = UINT64_MAX;
        int failed = PyDict_SetItem(self->states_by_tid, key, (PyObject *)st) < 0
            || PyList_Append(self->states, (PyObject *)st) < 0;
        Py_DECREF(st);  /* the dict and the list hold it */
        if (failed) {
            Py_DECREF(key);
            return NULL;
        }
    }
    Py_DECREF(key);
    self->last_tid = tid;
    self->last_pthread = me;
    self->last_state = st;
    return st;
}

/* -- function table (open addressing on the code object's address) -------- */

static size_t
slot_of(TracerObject *self, PyObject *code)
{
    uint64_t h = ((uint64_t)(uintptr_t)code >> 4) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (self->tcap - 1);
}

static FuncInfo *
table_get(TracerObject *self, PyObject *code)
{
    size_t mask = self->tcap - 1;
    for (size_t i = slot_of(self, code);; i = (i + 1) & mask) {
        FuncInfo *fi = self->table[i];
        if (fi == NULL || fi->code == code) {
            return fi;
        }
    }
}

static int
table_put(TracerObject *self, FuncInfo *fi)
{
    if ((self->tcount + 1) * 2 > self->tcap) {
        size_t old_cap = self->tcap;
        FuncInfo **old = self->table;
        FuncInfo **table = PyMem_Calloc(old_cap * 2, sizeof(FuncInfo *));
        if (table == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->table = table;
        self->tcap = old_cap * 2;
        for (size_t i = 0; i < old_cap; i++) {
            if (old[i] != NULL) {
                size_t j = slot_of(self, old[i]->code);
                while (self->table[j] != NULL) {
                    j = (j + 1) & (self->tcap - 1);
                }
                self->table[j] = old[i];
            }
        }
        PyMem_Free(old);
    }
    size_t j = slot_of(self, fi->code);
    while (self->table[j] != NULL) {
        j = (j + 1) & (self->tcap - 1);
    }
    self->table[j] = fi;
    self->tcount++;
    return 0;
}

/* Asks the Python collector; returns NULL without an error for code that is not instrumented. */
static FuncInfo *
instrument(TracerObject *self, PyObject *code)
{
    Held held;
    if (hold_signals_for_call(&held) < 0) {
        return NULL;
    }
    PyObject *entry = PyObject_CallOneArg(self->instrument, code);
    release_signals(&held);
    if (entry == NULL) {
        return NULL;
    }
    if (entry == Py_None) {
        Py_DECREF(entry);
        return NULL;
    }
    /* entry: a protocol.FunctionEntry */
    PyObject *kind = PyObject_GetAttrString(entry, "suspends");
    PyObject *names = PyObject_GetAttrString(entry, "names");
    PyObject *func_id = PyObject_GetAttrString(entry, "func_id");
    PyObject *redact = PyObject_GetAttrString(entry, "redact");
    PyObject *redacted = PyObject_GetAttrString(entry, "redacted");
    Py_DECREF(entry);
    FuncInfo *fi = NULL;
    if (kind == NULL || names == NULL || func_id == NULL || redact == NULL || redacted == NULL || !PyTuple_Check(names)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "histeg: malformed function entry");
        }
        goto done;
    }
    fi = PyMem_Calloc(1, sizeof(FuncInfo));
    if (fi == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    fi->code = code;
    fi->names = Py_NewRef(names);
    fi->nparams = PyTuple_GET_SIZE(names);
    fi->func_id = (uint32_t)PyLong_AsUnsignedLong(func_id);
    fi->suspends = PyObject_IsTrue(kind);
    fi->redact = PyLong_AsUnsignedLongLong(redact);
    fi->redacted = Py_NewRef(redacted);
    if (PyErr_Occurred() || !PyCallable_Check(redacted) || table_put(self, fi) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "histeg: redacted must be callable");
        }
        Py_DECREF(fi->names);
        Py_DECREF(fi->redacted);
        PyMem_Free(fi);
        fi = NULL;
    }
done:
    Py_XDECREF(kind);
    Py_XDECREF(names);
    Py_XDECREF(func_id);
    Py_XDECREF(redact);
    Py_XDECREF(redacted);
    return fi;
}

/* -- values ---------------------------------------------------------------- */

/* The id a call into Python answered (a new reference, or NULL when it raised); NO_VALUE for an error, cleared. */
static unsigned long long
answered_id(PyObject *found)
{
    if (found == NULL) {
        PyErr_Clear();
        return NO_VALUE;
    }
    unsigned long long id = PyLong_AsUnsignedLongLong(found);
    Py_DECREF(found);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return NO_VALUE;
    }
    return id;
}

/* Python abstracting a value for this thread: 0, its events dropped and the signals held until values_end; 1 when a
 * handler is due, and nothing may be called (the value is then unknown). */
static int
values_begin(TStateObject *st, Held *held)
{
    if (hold_signals(held)) {
        return 1;
    }
    st->diverting++;
    return 0;
}

static void
values_end(TStateObject *st, Held *held)
{
    st->diverting--;
    release_signals(held);
}

/* The id `fn(value)` answers; its events are dropped while it runs, and a failure is NO_VALUE. */
static unsigned long long
id_from(TStateObject *st, PyObject *fn, PyObject *value)
{
    Held held;
    if (values_begin(st, &held)) {
        return NO_VALUE;
    }
    PyObject *found = PyObject_CallOneArg(fn, value);
    values_end(st, &held);
    return answered_id(found);
}

/* -- keyed values -----------------------------------------------------------
 * ValueIds caches the id of a program's object, a tuple, a tuple subclass (a lexer's token type) and a list, tuple or
 * dict subclass (an OrderedDict) by a key of
 * what its text shows (ValueIds._by_key): on a suite of short tests most values are such hits, and making the
 * key in Python costs microseconds. keyed_id makes the same key, object for object, from the tables ValueIds
 * fills and looks it up; a key not found yet goes to ValueIds._by_key (the value is abstracted once for it),
 * and anything the tables do not say yet, or any doubt, to ValueIds.id_of as before.
 * Only builtin getters are called and only exact builtin scalars, tuples and types are hashed: no project code. */

enum {
    K_BY_OBJECT, K_BY_KEY, K_OBJECTS, K_TUPLE_TYPES, K_CONTENT_TYPES, K_CONTENTS, K_LAYOUTS, K_PLAIN, K_KINDS, K_SHOWN_KINDS, K_UNSET,
    K_SHOWN_TYPES, K_CONTENT_BASES, K_REDACTED, K_NAMED, K_UNKEYED, K_WALK, K_NAMES, K_VALUES, K_NEXT, K_WRITE, K_LIMITS, K_COUNT
};
#define MAX_KEYED_TUPLE 8
#define MAX_KEY_LENGTH 64
#define MAX_KEYED_TEXT 64
#define MAX_KEYED_FIELD 512
#define MAX_ITEMS 64
#define MAX_KEYED_DEPTH 3  /* values._MAX_KEYED_DEPTH, values.MAX_DEPTH */
#define MAX_INLINE_FIELDS 64

/* values.hashed_by_identity: hashing and comparing the class `cls` run no project code (its metaclass is type, or
 * keeps type's hash and comparisons), so it can be part of a key. */
static inline int
hashed_by_identity(PyTypeObject *cls)
{
    PyTypeObject *meta = Py_TYPE(cls);
    return meta == &PyType_Type
        || (Py_IS_TYPE(meta, &PyType_Type) && meta->tp_hash == PyType_Type.tp_hash && meta->tp_richcompare == PyType_Type.tp_richcompare);
}

#define TABLE(self, k) PyTuple_GET_ITEM((self)->keys, (k))

/* The answers a class's TypeFact keeps (answers[]) and the sets it records membership of (members bits). */
enum { A_KINDS, A_LAYOUTS, A_SHOWN_TYPES, A_CONTENT_BASES, A_NAMES, A_BY_TYPE };
enum { M_OBJECTS, M_TUPLE_TYPES, M_CONTENT_TYPES, M_NAMED, M_UNKEYED, M_SHOWN_KIND_KNOWN, M_SHOWN_KIND };
#define M_VARYING ((1u << M_OBJECTS) | (1u << M_TUPLE_TYPES) | (1u << M_CONTENT_TYPES) | (1u << M_NAMED) | (1u << M_UNKEYED))
/* ValueIds.id_of puts a class in one of these sets once its values vary, and such a class never gets a by_type id. */

static inline TypeFact *
fact_of(TracerObject *self, PyTypeObject *cls)
{
    return type_fact(&self->facts, cls, (size_t)self->limits[L_CACHED]);
}

/* What the dict `table` (keys[k], or by_type) says for `cls`, as PyDict_GetItemWithError does (borrowed; NULL and no
 * error: no answer yet), asked once per class once there is an answer. */
static PyObject *
class_answer(TracerObject *self, PyObject *table, int slot, PyTypeObject *cls)
{
    TypeFact *fact = fact_of(self, cls);
    if (fact == NULL) {
        return NULL;
    }
    if (fact->answers[slot] != NULL) {
        return fact->answers[slot];
    }
    PyObject *found = PyDict_GetItemWithError(table, (PyObject *)cls);
    if (found != NULL) {
        fact->answers[slot] = Py_NewRef(found);
    }
    return found;
}

/* PySet_Contains(keys[k], cls), asked once per class once it says yes. */
static int
class_member(TracerObject *self, int k, int bit, PyTypeObject *cls)
{
    TypeFact *fact = fact_of(self, cls);
    if (fact == NULL) {
        return -1;
    }
    if (fact->members & (1u << bit)) {
        return 1;
    }
    int found = PySet_Contains(TABLE(self, k), (PyObject *)cls);
    if (found == 1) {
        fact->members |= 1u << bit;
    }
    return found;
}

/* Whether a table's answer `found` (NULL: none, or an error) is True, -1 on error; a missing answer sets *unsettled
 * (Python answers, and fills the table, when it makes the key). */
static int
says_true(PyObject *found, int *unsettled)
{
    if (found == NULL) {
        int failed = PyErr_Occurred() != NULL;
        *unsettled |= !failed;
        return failed ? -1 : 0;
    }
    return found == Py_True;
}

/* Whether the dict `table` says True for `key` (a tuple of field names: hashed without project code), as says_true. */
static int
answer(PyObject *table, PyObject *key, int *unsettled)
{
    return says_true(PyDict_GetItemWithError(table, key), unsettled);
}

/* answer() of a table keyed by class (keys[k], its slot in a TypeFact). */
static int
class_says(TracerObject *self, int k, int slot, PyTypeObject *cls, int *unsettled)
{
    return says_true(class_answer(self, TABLE(self, k), slot, cls), unsettled);
}

/* Abstraction.content_base: the builtin list, tuple or dict whose content a value of `cls` shows after its type name,
 * NULL when none; a missing answer sets *unsettled, an error is left set. */
static PyTypeObject *
content_base(TracerObject *self, PyTypeObject *cls, int *unsettled)
{
    PyObject *base = class_answer(self, TABLE(self, K_CONTENT_BASES), A_CONTENT_BASES, cls);
    if (base == NULL) {
        *unsettled |= !PyErr_Occurred();
        return NULL;
    }
    if (base == (PyObject *)&PyList_Type || base == (PyObject *)&PyTuple_Type || base == (PyObject *)&PyDict_Type) {
        return (PyTypeObject *)base;
    }
    return NULL;
}

enum { ITEM_NONE, ITEM_SCALAR, ITEM_TYPE, ITEM_CONTENT };

/* The content key the keyed tables keep for a token type (ValueIds._contents: address -> (item, content key)),
 * borrowed; NULL (no error left set) when they keep none for this very object. */
static PyObject *
kept_content(TracerObject *self, PyObject *item)
{
    PyObject *address = PyLong_FromVoidPtr(item), *known = NULL;
    if (address != NULL) {
        known = PyDict_GetItemWithError(TABLE(self, K_CONTENTS), address);
        Py_DECREF(address);
    }
    PyErr_Clear();
    return known != NULL && PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == 2 && PyTuple_GET_ITEM(known, 0) == item
        ? PyTuple_GET_ITEM(known, 1) : NULL;
}

static PyObject *tuple_key(TracerObject *self, PyObject *value, int nested, int *unsettled);

/* ValueIds._tuple_key's content of a token type met for the first time: its items keyed (nested) and kept in the
 * contents table as Python keeps them, borrowed from there; NULL (no error left set) when it has none or the table is
 * full. Once the C collector answered a tuple holding a token type by its container key, Python never met the token
 * type again, and every such tuple was keyed by its container (a Python key made and looked up) instead of digested. */
static PyObject *
new_content(TracerObject *self, PyObject *item, int *unsettled)
{
    PyObject *contents = TABLE(self, K_CONTENTS);
    if (PyDict_GET_SIZE(contents) >= self->limits[L_CACHED]) {
        return NULL;
    }
    int inner_unsettled = 0;
    PyObject *inner = tuple_key(self, item, 1, &inner_unsettled), *address = NULL, *kept = NULL, *found = NULL;
    *unsettled |= inner_unsettled;
    if (inner != NULL && (address = PyLong_FromVoidPtr(item)) != NULL && (kept = PyTuple_Pack(2, item, inner)) != NULL
        && PyDict_SetItem(contents, address, kept) == 0) {
        found = inner;  /* held by the table, through `kept` */
    }
    PyErr_Clear();
    Py_XDECREF(kept);
    Py_XDECREF(address);
    Py_XDECREF(inner);
    return found;
}

/* How ValueIds._tuple_key keys one item of a tuple: ITEM_SCALAR by (its class, itself), ITEM_TYPE by its class alone,
 * ITEM_CONTENT by (its class, *content) (a token type's content key, borrowed), ITEM_NONE when it has no key (an
 * error maybe set; *unsettled set when Python keys it once it has met it). */
static int
tuple_item(TracerObject *self, PyObject *item, int nested, int *unsettled, PyObject **content)
{
    PyTypeObject *cls = Py_TYPE(item);
    if ((cls == &PyBytes_Type && PyBytes_GET_SIZE(item) <= MAX_KEY_LENGTH) || item == Py_None || cls == &PyBool_Type
        || cls == &PyLong_Type || (cls == &PyUnicode_Type && PyUnicode_GET_LENGTH(item) <= MAX_KEY_LENGTH)) {
        return ITEM_SCALAR;
    }
    if (cls == &PyBytes_Type || !hashed_by_identity(cls)) {
        return ITEM_NONE;
    }
    int shown = class_says(self, K_SHOWN_TYPES, A_SHOWN_TYPES, cls, unsettled);
    if (shown != 0) {
        return shown == 1 ? ITEM_TYPE : ITEM_NONE;
    }
    if (!nested && !PyErr_Occurred() && PyTuple_Check(item) && PyTuple_GET_SIZE(item) <= MAX_KEYED_TUPLE
        && content_base(self, cls, unsettled) == &PyTuple_Type) {
        if ((*content = kept_content(self, item)) != NULL || (*content = new_content(self, item, unsettled)) != NULL) {
            return ITEM_CONTENT;
        }
        *unsettled = 1;  /* Python keys the content of a token type it has not met */
    }
    return ITEM_NONE;
}

/* ValueIds._tuple_key: NULL when the tuple has no key (or on an error, cleared by the caller). */
static PyObject *
tuple_key(TracerObject *self, PyObject *value, int nested, int *unsettled)
{
    Py_ssize_t n = PyTuple_GET_SIZE(value);
    PyObject *parts = PyTuple_New(n);
    if (parts == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(value, i), *content = NULL, *part = NULL;
        PyTypeObject *cls = Py_TYPE(item);
        int kind = tuple_item(self, item, nested, unsettled, &content);
        if (kind == ITEM_SCALAR) {
            part = PyTuple_Pack(2, (PyObject *)cls, item);
        }
        else if (kind == ITEM_TYPE) {
            part = Py_NewRef((PyObject *)cls);
        }
        else if (kind == ITEM_CONTENT) {
            part = PyTuple_Pack(2, (PyObject *)cls, content);
        }
        if (part == NULL) {
            Py_DECREF(parts);
            return NULL;
        }
        PyTuple_SET_ITEM(parts, i, part);
    }
    return parts;
}

/* value_key's key of an exact tuple, (tuple, tuple_key's parts), digested as key_digest_add would digest it, nothing
 * made: 1, or 0 when tuple_key makes no key (value_key then tries another; an error maybe set). */
static int
tuple_digest(TracerObject *self, PyObject *value, KeyDigest *digest, int *unsettled)
{
    key_digest_start(digest, 0);
    key_digest_feed(digest, KEY_TAG_TUPLE, 2, 2);  /* the key is a pair: the class, then its items' parts */
    key_digest_add_identity(digest, (PyObject *)&PyTuple_Type);
    Py_ssize_t n = PyTuple_GET_SIZE(value);
    key_digest_feed(digest, KEY_TAG_TUPLE, (uint64_t)n, (uint64_t)n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(value, i), *content = NULL;
        PyTypeObject *cls = Py_TYPE(item);
        int kind = tuple_item(self, item, 0, unsettled, &content);
        if (kind == ITEM_NONE) {
            return 0;
        }
        if (kind == ITEM_TYPE) {
            key_digest_add_identity(digest, (PyObject *)cls);
            continue;
        }
        key_digest_feed(digest, KEY_TAG_TUPLE, 2, 2);
        key_digest_add_identity(digest, (PyObject *)cls);
        key_digest_add(digest, kind == ITEM_SCALAR ? item : content);
    }
    return 1;
}

/* Where a key's parts go: into a list the key is made of, or into its digest (the same parts, nothing made).
 * `unsettled`: a table had no answer yet (Python fills it when it makes the key itself), so "no key" is not final. */
typedef struct {
    PyObject *list;
    KeyDigest *digest;
    int unsettled;
    int deep;  /* a part was taken by identity (a class), a function's name or a dict's or a nested container's content:
                * not a key the object memo keeps */
} Parts;

static int
parts_add(Parts *parts, PyObject *part)
{
    if (parts->list != NULL) {
        return PyList_Append(parts->list, part);
    }
    key_digest_add(parts->digest, part);
    return 0;
}

static int append_pair(Parts *parts, PyObject *first, PyObject *second)
{
    return parts_add(parts, first) < 0 || parts_add(parts, second) < 0 ? -1 : 0;
}

/* parts_add of a part the key compares by identity (a class hashed by identity, None, a bool, a sentinel). */
static inline int
parts_add_same(Parts *parts, PyObject *part)
{
    if (parts->list != NULL) {
        return PyList_Append(parts->list, part);
    }
    key_digest_add_identity(parts->digest, part);
    return 0;
}

/* A part compared by identity followed by one that is not (a scalar's type, then the scalar). */
static inline int
append_typed(Parts *parts, PyTypeObject *cls, PyObject *item)
{
    return parts_add_same(parts, (PyObject *)cls) < 0 || parts_add(parts, item) < 0 ? -1 : 0;
}

static int container_parts(TracerObject *self, Parts *parts, PyObject *value, PyTypeObject *cls, int depth, Py_ssize_t *budget);

/* A container's type and length, the head of its parts. */
static int
append_size(Parts *parts, PyTypeObject *cls, Py_ssize_t length)
{
    if (parts->list == NULL) {  /* digested: no int made for it */
        key_digest_add_identity(parts->digest, (PyObject *)cls);
        key_digest_add_int(parts->digest, (long long)length);
        return 0;
    }
    PyObject *size = PyLong_FromSsize_t(length);
    int failed = size == NULL || append_pair(parts, (PyObject *)cls, size) < 0;
    Py_XDECREF(size);
    return failed ? -1 : 0;
}

static Py_ssize_t
container_size(PyObject *value, PyTypeObject *base)
{
    return base == &PyDict_Type ? PyDict_GET_SIZE(value) : base == &PyList_Type ? PyList_GET_SIZE(value) : PyTuple_GET_SIZE(value);
}

/* Abstraction._item_parts: one item of a container at `depth`, spending the budget; 1 done, 0 no key, -1 error. A
 * container or a subclass of one (its type first: collections.OrderedDict({...})) by its base's content, or below what
 * texts show by the base and its length (<list len=2>). */
static int
item_parts(TracerObject *self, Parts *parts, PyObject *item, int depth, Py_ssize_t *budget)
{
    PyTypeObject *item_cls = Py_TYPE(item), *base = item_cls;
    --*budget;
    if (item == Py_None || item_cls == &PyBool_Type || item_cls == &PyLong_Type
        || (item_cls == &PyUnicode_Type && PyUnicode_GET_LENGTH(item) <= MAX_KEYED_TEXT)) {
        return append_typed(parts, item_cls, item) < 0 ? -1 : 1;
    }
    if (item_cls != &PyList_Type && item_cls != &PyTuple_Type && item_cls != &PyDict_Type) {
        if (item_cls == &PyMethod_Type && PyFunction_Check(PyMethod_GET_FUNCTION(item))
            && Py_IS_TYPE(PyMethod_GET_FUNCTION(item), &PyFunction_Type) && hashed_by_identity(Py_TYPE(PyMethod_GET_SELF(item)))) {
            parts->deep = 1;  /* by its function's name: not a part the memo compares */
            PyObject *qualname = ((PyFunctionObject *)PyMethod_GET_FUNCTION(item))->func_qualname;
            return parts_add_same(parts, (PyObject *)item_cls) < 0
                || append_typed(parts, Py_TYPE(PyMethod_GET_SELF(item)), qualname) < 0 ? -1 : 1;
        }
        if (!hashed_by_identity(item_cls)) {
            return 0;
        }
        int shown = class_says(self, K_SHOWN_TYPES, A_SHOWN_TYPES, item_cls, &parts->unsettled);
        if (shown != 0 || parts->unsettled) {
            return shown == 1 ? (parts_add_same(parts, (PyObject *)item_cls) < 0 ? -1 : 1) : shown;
        }
        base = content_base(self, item_cls, &parts->unsettled);
        if (base == NULL) {
            return PyErr_Occurred() ? -1 : 0;
        }
        if (parts_add_same(parts, (PyObject *)item_cls) < 0) {
            return -1;
        }
    }
    parts->deep = 1;  /* a container in a container, or a container subclass's content */
    if (depth < MAX_KEYED_DEPTH && *budget > 0) {
        return container_parts(self, parts, item, base, depth + 1, budget);
    }
    return append_size(parts, base, container_size(item, base)) < 0 ? -1 : 1;
}

/* Abstraction._container_parts: appends a list's, tuple's or dict's parts to `parts`, read from the storage of `cls` (the
 * builtin type; `value` may be of a subclass, whose methods never run), its items as long as `budget` lasts: 1 done,
 * 0 no key, -1 error. A dict's names must be known not to name secrets (a name not checked yet leaves the value to
 * Python, which checks it). Nothing here runs code that could change the container. */
static int
container_parts(TracerObject *self, Parts *parts, PyObject *value, PyTypeObject *cls, int depth, Py_ssize_t *budget)
{
    if (append_size(parts, cls, container_size(value, cls)) < 0) {
        return -1;
    }
    int result = 1;
    if (cls == &PyDict_Type) {
        Py_ssize_t pos = 0;
        PyObject *name, *item;
        while (result == 1 && *budget > 0 && PyDict_Next(value, &pos, &name, &item)) {
            PyObject *redacted = PyUnicode_CheckExact(name) && PyUnicode_GET_LENGTH(name) <= MAX_KEYED_TEXT
                ? PyDict_GetItemWithError(TABLE(self, K_REDACTED), name) : Py_True;
            if (redacted != Py_False) {  /* a secret, or not checked yet */
                parts->unsettled |= redacted == NULL;
                return PyErr_Occurred() ? -1 : 0;
            }
            --*budget;
            result = parts_add(parts, name) < 0 ? -1 : item_parts(self, parts, item, depth, budget);
        }
        return result;
    }
    Py_ssize_t n = container_size(value, cls);
    for (Py_ssize_t i = 0; i < n && result == 1 && *budget > 0; i++) {
        result = item_parts(self, parts, cls == &PyList_Type ? PyList_GET_ITEM(value, i) : PyTuple_GET_ITEM(value, i), depth, budget);
    }
    return result;
}

/* Abstraction.container_key: one flat tuple, or NULL (no key, or an error, cleared by the caller); *unsettled set when
 * a table had no answer yet (Python's container_key may then make a key). */
static PyObject *
container_key(TracerObject *self, PyObject *value, PyTypeObject *cls, int *unsettled)
{
    Parts parts = {PyList_New(0), NULL};
    PyObject *key = NULL;
    Py_ssize_t budget = MAX_ITEMS;
    if (parts.list != NULL && container_parts(self, &parts, value, cls, 1, &budget) == 1) {
        key = PyList_AsTuple(parts.list);
    }
    *unsettled |= parts.unsettled;
    Py_XDECREF(parts.list);
    return key;
}

/* Appends a field's entries (Abstraction.fields_key): 1 done, 0 no key, -1 error. */
static int
field_entries(TracerObject *self, Parts *parts, PyObject *item)
{
    PyTypeObject *cls = Py_TYPE(item);
    if (cls == &PyUnicode_Type) {
        if (PyUnicode_GET_LENGTH(item) > MAX_KEYED_FIELD) {
            return 0;
        }
        return append_typed(parts, cls, item) < 0 ? -1 : 1;
    }
    if (item == Py_None || item == TABLE(self, K_UNSET)) {
        return parts_add_same(parts, item) < 0 ? -1 : 1;
    }
    if (cls == &PyBool_Type || cls == &PyLong_Type) {
        return append_typed(parts, cls, item) < 0 ? -1 : 1;
    }
    if (!hashed_by_identity(cls)) {
        return 0;
    }
    PyObject *kind_base = class_answer(self, TABLE(self, K_KINDS), A_KINDS, cls);  /* (kind, base) */
    if (kind_base == NULL) {
        parts->unsettled = 1;  /* a type not classified yet */
        return PyErr_Occurred() ? -1 : 0;
    }
    if (!PyTuple_CheckExact(kind_base) || PyTuple_GET_SIZE(kind_base) != 2) {
        return 0;
    }
    PyObject *kind = PyTuple_GET_ITEM(kind_base, 0);
    /* values._CLASS, by itself: only a class can be one, so most fields skip the comparison of the kind's name */
    if (PyType_Check(item) && PyUnicode_Check(kind) && PyUnicode_CompareWithASCIIString(kind, "class") == 0) {
        if (!hashed_by_identity((PyTypeObject *)item)) {
            return 0;
        }
        parts->deep = 1;
        return parts_add_same(parts, (PyObject *)cls) < 0 || parts_add_same(parts, item) < 0 ? -1 : 1;
    }
    TypeFact *fact = fact_of(self, cls);  /* the set is a constant: its answer for the class's kind is the class's */
    if (fact == NULL) {
        return -1;
    }
    int shown = fact->members & (1u << M_SHOWN_KIND_KNOWN) ? (int)((fact->members >> M_SHOWN_KIND) & 1) : PySet_Contains(TABLE(self, K_SHOWN_KINDS), kind);
    if (shown >= 0) {
        fact->members |= (1u << M_SHOWN_KIND_KNOWN) | ((unsigned)shown << M_SHOWN_KIND);
    }
    if (shown != 0) {
        return shown < 0 ? -1 : 0;
    }
    if (PyTuple_GET_ITEM(kind_base, 1) != (PyObject *)cls) {
        return parts_add_same(parts, (PyObject *)cls) < 0 ? -1 : 1;  /* an object: by its type alone */
    }
    if (cls != &PyList_Type && cls != &PyTuple_Type && cls != &PyDict_Type) {
        return 0;
    }
    Py_ssize_t budget = MAX_ITEMS;
    parts->deep |= cls == &PyDict_Type;  /* a list's or tuple's items are the memo's parts; a dict's names are not */
    return container_parts(self, parts, item, cls, 1, &budget);
}

#define MAX_FIELDS 128

/* An instance's fields as its key reads them (strong references), read once: for the object memo, then for the key. */
typedef struct {
    Py_ssize_t n;
    PyObject *names[MAX_FIELDS], *items[MAX_FIELDS];
    PyObject *namespace;  /* the instance's __dict__ when its fields were read from it, else NULL */
} Fields;

static void
fields_release(Fields *f)
{
    for (Py_ssize_t k = 0; k < f->n; k++) {
        Py_DECREF(f->names[k]);
        Py_DECREF(f->items[k]);
    }
    f->n = 0;
    Py_CLEAR(f->namespace);
}

/* Reads an instance's fields (its inline attributes or __dict__, then its slots, an unset slot as K_UNSET) into `f`,
 * whose `n` must be 0: 1 done, 0 no key (*unsettled set when Python makes the key of so many fields), -1 error (maybe
 * left set). `f` holds what was read in any case (fields_release). `layout` is the class's (holder, slots). `inline_only`:
 * an instance whose attributes are not where they are read without a call is not read (0): they are read where the
 * interpreter keeps them inline, or from a __dict__ that exists already (a tuple subclass's: a lexer's token type),
 * the dict the holder would return; none is ever made. */
static int
read_fields(TracerObject *self, PyObject *value, PyObject *layout, Fields *f, int *unsettled, int inline_only)
{
    PyObject *holder = PyTuple_GET_ITEM(layout, 0), *slots = PyTuple_GET_ITEM(layout, 1);
    if (holder != Py_None) {
        PyObject *inline_names[MAX_INLINE_FIELDS], *inline_items[MAX_INLINE_FIELDS];
        Py_ssize_t count = histeg_inline_attributes(value, inline_names, inline_items, MAX_INLINE_FIELDS);
        for (Py_ssize_t k = 0; k < count; k++) {  /* read where they are: no __dict__ made */
            if (!PyUnicode_CheckExact(inline_names[k]) || f->n == MAX_FIELDS) {
                *unsettled |= f->n == MAX_FIELDS;  /* Python makes the key of so many fields */
                return 0;
            }
            f->names[f->n] = Py_NewRef(inline_names[k]);
            f->items[f->n++] = Py_NewRef(inline_items[k]);
        }
        if (count < 0 && inline_only) {
            PyObject *dict = histeg_existing_dict(value);
            if (dict == NULL || !PyDict_CheckExact(dict)) {
                return 0;
            }
            Py_ssize_t pos = 0;
            PyObject *name, *item;
            while (PyDict_Next(dict, &pos, &name, &item)) {
                if (!PyUnicode_CheckExact(name) || f->n == MAX_FIELDS) {
                    *unsettled |= f->n == MAX_FIELDS;
                    return 0;
                }
                f->names[f->n] = Py_NewRef(name);
                f->items[f->n++] = Py_NewRef(item);
            }
        }
        else if (count < 0) {
            f->namespace = PyObject_CallOneArg(holder, value);
            if (f->namespace == NULL || !PyDict_CheckExact(f->namespace)) {
                return f->namespace == NULL ? -1 : 0;
            }
            Py_ssize_t pos = 0;
            PyObject *name, *item;
            while (PyDict_Next(f->namespace, &pos, &name, &item)) {
                if (!PyUnicode_CheckExact(name) || f->n == MAX_FIELDS) {
                    *unsettled |= f->n == MAX_FIELDS;
                    return 0;
                }
                f->names[f->n] = Py_NewRef(name);
                f->items[f->n++] = Py_NewRef(item);
            }
        }
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(slots); k++) {
        PyObject *slot = PyTuple_GET_ITEM(slots, k);
        if (!PyTuple_CheckExact(slot) || PyTuple_GET_SIZE(slot) < 2 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(slot, 0)) || f->n == MAX_FIELDS) {
            *unsettled = 1;
            return 0;
        }
        PyObject *item = histeg_slot_value(slot, value);
        if (item == NULL) {
            PyErr_Clear();  /* an unset slot (its error, if any) */
            item = Py_NewRef(TABLE(self, K_UNSET));
        }
        f->names[f->n] = Py_NewRef(PyTuple_GET_ITEM(slot, 0));
        f->items[f->n++] = item;
    }
    return 1;
}

/* The class's layout (holder, ((name, getter, member), ...)), borrowed; NULL when there is none (*unsettled set when
 * the table has no answer yet, an error maybe left set). */
static PyObject *
layout_of(TracerObject *self, PyTypeObject *cls, int *unsettled)
{
    PyObject *layout = class_answer(self, TABLE(self, K_LAYOUTS), A_LAYOUTS, cls);
    if (layout == NULL || !PyTuple_CheckExact(layout) || PyTuple_GET_SIZE(layout) != 2 || !PyTuple_CheckExact(PyTuple_GET_ITEM(layout, 1))) {
        *unsettled |= layout == NULL && !PyErr_Occurred();
        return NULL;
    }
    return layout;
}

/* Adds an instance's fields key (Abstraction.fields_key) to `out`, part by part: 1 done, 0 no key, -1 error (an error
 * may be left set: the caller clears it). An instance with more than MAX_FIELDS fields is left to Python. `given`: its
 * fields read already (read_fields gave 1), or NULL. */
static int
fields_parts(TracerObject *self, Parts *out, PyObject *value, PyTypeObject *cls, const Fields *given)
{
    Fields own;
    own.n = 0;
    own.namespace = NULL;
    PyObject *name_tuple = NULL;
    int result = 1;
    if (given == NULL) {
        PyObject *layout = layout_of(self, cls, &out->unsettled);
        result = layout == NULL ? (PyErr_Occurred() ? -1 : 0) : read_fields(self, value, layout, &own, &out->unsettled, 0);
        given = &own;
    }
    if (result != 1) {
        goto done;
    }
    Py_ssize_t n = given->n;
    PyObject *const *names = given->names, *const *items = given->items;
    TypeFact *fact = fact_of(self, cls);
    if (fact == NULL) {
        result = -1;
        goto done;
    }
    PyObject *seen = fact->names;  /* the names this class's objects had last time: most often the same strings */
    int same = seen != NULL && PyTuple_GET_SIZE(seen) == n;
    for (Py_ssize_t k = 0; same && k < n; k++) {
        same = PyTuple_GET_ITEM(seen, k) == names[k];
    }
    if (same) {
        name_tuple = Py_NewRef(seen);
        result = fact->names_plain;
    }
    else {
        name_tuple = PyTuple_New(n);
        if (name_tuple == NULL) {
            result = -1;
            goto done;
        }
        for (Py_ssize_t k = 0; k < n; k++) {
            PyTuple_SET_ITEM(name_tuple, k, Py_NewRef(names[k]));
        }
        int unsettled = 0;
        result = answer(TABLE(self, K_PLAIN), name_tuple, &unsettled);
        out->unsettled |= unsettled;
        if (result >= 0 && !unsettled) {  /* an answer to keep (the entry found again: making the tuple may have run code) */
            fact = fact_of(self, cls);
            if (fact != NULL) {
                Py_XSETREF(fact->names, Py_NewRef(name_tuple));
                fact->names_plain = result;
            }
            else {
                PyErr_Clear();  /* a table that could not grow: asked again next time */
            }
        }
    }
    if (result != 1) {
        goto done;
    }
    if (out->list != NULL) {
        result = PyList_Append(out->list, name_tuple) < 0 ? -1 : 1;
    }
    else {
        key_digest_add_same(out->digest, names, n);  /* a class's field names are the same strings each time */
    }
    for (Py_ssize_t k = 0; k < n && result == 1; k++) {
        result = field_entries(self, out, items[k]);
    }
done:
    fields_release(&own);
    Py_XDECREF(name_tuple);
    return result;
}

/* Abstraction.fields_key: NULL when the instance has no key (or on an error, cleared by the caller); *unsettled set
 * when a table had no answer yet. */
static PyObject *
fields_key(TracerObject *self, PyObject *value, PyTypeObject *cls, int *unsettled)
{
    Parts parts = {PyList_New(0), NULL};
    PyObject *key = NULL;
    if (parts.list != NULL && fields_parts(self, &parts, value, cls, NULL) == 1) {
        key = PyList_AsTuple(parts.list);
    }
    *unsettled |= parts.unsettled;
    Py_XDECREF(parts.list);
    return key;
}

/* Abstraction.content_key: (cls, the base's content parts, the fields key) for a list, tuple or dict subclass, or NULL
 * (no key, or an error, cleared by the caller). */
static PyObject *
content_key(TracerObject *self, PyObject *value, PyTypeObject *cls, int *unsettled)
{
    PyTypeObject *base = content_base(self, cls, unsettled);
    PyObject *content = base != NULL ? container_key(self, value, base, unsettled) : NULL;
    PyObject *fields = content != NULL ? fields_key(self, value, cls, unsettled) : NULL;
    PyObject *key = fields != NULL ? PyTuple_Pack(3, (PyObject *)cls, content, fields) : NULL;
    Py_XDECREF(content);
    Py_XDECREF(fields);
    return key;
}

/* The module (a str or None) and qualified name (a str) a function's name key is made of, borrowed: 1, or 0 when
 * they are anything else (it has no name key). */
static int
function_name(PyObject *function, PyObject **module, PyObject **qualname)
{
    *module = ((PyFunctionObject *)function)->func_module;
    *qualname = ((PyFunctionObject *)function)->func_qualname;
    if (*module == NULL) {
        *module = Py_None;  /* as the __module__ member reads it */
    }
    return (*module == Py_None || PyUnicode_CheckExact(*module)) && *qualname != NULL && PyUnicode_CheckExact(*qualname);
}

/* Abstraction.name_key: a function by its module and qualified name, a class (its metaclass hashes by identity) by itself. */
static PyObject *
name_key(PyObject *value, PyTypeObject *cls)
{
    if (cls != &PyFunction_Type) {
        return PyTuple_Pack(2, (PyObject *)cls, value);
    }
    PyObject *module, *qualname;
    return function_name(value, &module, &qualname) ? PyTuple_Pack(3, (PyObject *)cls, module, qualname) : NULL;
}

/* The key ValueIds._by_key would look up for `value`, or NULL (no key here; never an error left set). */
static PyObject *
value_key(TracerObject *self, PyObject *value, PyTypeObject *cls, int *unsettled)
{
    PyObject *key = NULL;
    if (cls == &PyTuple_Type) {
        if (PyTuple_GET_SIZE(value) <= MAX_KEYED_TUPLE) {
            PyObject *parts = tuple_key(self, value, 0, unsettled);
            key = parts ? PyTuple_Pack(2, (PyObject *)&PyTuple_Type, parts) : NULL;
            Py_XDECREF(parts);
        }
        if (key == NULL && !PyErr_Occurred()) {
            key = container_key(self, value, cls, unsettled);
        }
    }
    else if (cls == &PyList_Type || cls == &PyDict_Type) {
        key = container_key(self, value, cls, unsettled);
    }
    else {
        int tuple_type = class_member(self, K_TUPLE_TYPES, M_TUPLE_TYPES, cls);
        if (tuple_type == 1 && PyTuple_GET_SIZE(value) <= MAX_KEYED_TUPLE) {
            PyObject *content = tuple_key(self, value, 1, unsettled), *fields = content ? fields_key(self, value, cls, unsettled) : NULL;
            key = fields ? PyTuple_Pack(3, (PyObject *)cls, content, fields) : NULL;
            Py_XDECREF(content);
            Py_XDECREF(fields);
        }
        int content_type = key == NULL && tuple_type >= 0 && !*unsettled && !PyErr_Occurred()
            ? class_member(self, K_CONTENT_TYPES, M_CONTENT_TYPES, cls) : -1;
        if (content_type == 1) {  /* after a tuple subclass's own key, as ValueIds.id_of tries them */
            key = content_key(self, value, cls, unsettled);
        }
        else if (content_type == 0 && tuple_type == 0 && class_member(self, K_OBJECTS, M_OBJECTS, cls) == 1) {
            PyObject *fields = fields_key(self, value, cls, unsettled);
            key = fields ? PyTuple_Pack(3, (PyObject *)&PyBaseObject_Type, (PyObject *)cls, fields) : NULL;
            Py_XDECREF(fields);
        }
        else if (content_type == 0 && tuple_type == 0 && class_member(self, K_NAMED, M_NAMED, cls) == 1) {
            key = name_key(value, cls);
        }
    }
    if (key == NULL) {
        PyErr_Clear();
    }
    return key;
}

/* The id ValueIds keeps under `key`: 1 and *id, 0 when it has none yet, -1 when the lookup failed (no error left set). */
static int
known_id(TracerObject *self, PyObject *key, unsigned long long *id)
{
    PyObject *found = PyDict_GetItemWithError(TABLE(self, K_BY_OBJECT), key);
    if (found == NULL) {
        if (!PyErr_Occurred()) {
            return 0;
        }
        PyErr_Clear();
        return -1;
    }
    if (!PyLong_CheckExact(found)) {
        return -1;
    }
    *id = PyLong_AsUnsignedLongLong(found);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return 1;
}

/* 1 and *id when ValueIds already knows the key of `value`, else 0 (never an error left set). *key is the key (a new
 * reference) or NULL when `value` has none here; on 0 it is the key ValueIds does not know yet, to hand to
 * ValueIds._by_key. */
static int
keyed_id(TracerObject *self, PyObject *value, PyTypeObject *cls, unsigned long long *id, PyObject **key, int *unsettled)
{
    *key = NULL;
    if (self->keys == NULL || !PyTuple_CheckExact(self->keys)) {
        return 0;
    }
    *key = value_key(self, value, cls, unsettled);
    int known = *key != NULL ? known_id(self, *key, id) : 0;
    if (known < 0) {  /* a lookup that failed: ValueIds.id_of answers */
        Py_CLEAR(*key);
        *unsettled = 1;
    }
    return known == 1;
}

/* Objects of a class whose last NO_KEY_STREAK objects had no key are walked without trying one (a lexer whose fields
 * hold keyword tables and compiled patterns: a key that fails reads every field up to the one that fails it, which on
 * sqlparse cost more than walking them), and one in NO_KEY_RETRY is tried again. Only what is cached changes: a walk
 * gives the text a key would have given. */
#define NO_KEY_STREAK 16
#define NO_KEY_RETRY 64

/* Whether to walk an object of `cls` without trying its key; *streak is its count of objects without a key (-1: none
 * recorded), for note_key to update. */
static int
skip_key(TracerObject *self, PyTypeObject *cls, long *streak)
{
    *streak = -1;
    if (self->no_key_streaks == NULL) {
        return 0;
    }
    PyObject *found = PyDict_GetItemWithError(self->no_key_streaks, (PyObject *)cls);
    if (found == NULL) {
        PyErr_Clear();
        return 0;
    }
    *streak = PyLong_AsLong(found);
    if (*streak < NO_KEY_STREAK) {
        return 0;
    }
    long next = *streak + 1 < NO_KEY_STREAK + NO_KEY_RETRY ? *streak + 1 : NO_KEY_STREAK - 1;  /* the last one tries */
    PyObject *count = PyLong_FromLong(next);  /* a small int: no allocation */
    if (count == NULL || PyDict_SetItem(self->no_key_streaks, (PyObject *)cls, count) < 0) {
        PyErr_Clear();
    }
    Py_XDECREF(count);
    return next >= NO_KEY_STREAK;
}

/* Counts an object of `cls` without a key (keyed 0), or forgets the count once one has a key (keyed 1). */
static void
note_key(TracerObject *self, PyTypeObject *cls, long streak, int keyed)
{
    if (keyed && streak < 0) {
        return;
    }
    if (self->no_key_streaks == NULL && (self->no_key_streaks = PyDict_New()) == NULL) {
        PyErr_Clear();
        return;
    }
    PyObject *count = keyed ? NULL : PyLong_FromLong(streak < 0 ? 1 : streak + 1);
    if (keyed ? PyDict_DelItem(self->no_key_streaks, (PyObject *)cls) < 0
              : count == NULL || PyDict_SetItem(self->no_key_streaks, (PyObject *)cls, count) < 0) {
        PyErr_Clear();
    }
    Py_XDECREF(count);
}

enum { SHAPE_TUPLE_TYPE = 1, SHAPE_OBJECT, SHAPE_NAMED, SHAPE_CONTAINER };
enum { NO_KEY_OBJECT = -2, NO_KEY = -1, NO_DIGEST = 0, DIGESTED = 1 };

/* value_key's key digested instead of made, for a program's objects (their fields), token types and functions and
 * classes: DIGESTED and `digest` when the value has a key, made of the same parts as value_key would make it;
 * NO_KEY when it has none and never will (value_key would make none: the same code decides, and no table lacked an
 * answer Python gives when it tries), NO_KEY_OBJECT when that value is a program's object; NO_DIGEST when value_key must say
 * (a part the digest does not take). A list's or dict's digest takes container_key's parts in its order (an
 * interpreter passes the same AST nodes and document to every visit: on jmespath seven in ten of the keys made were
 * known already), a tuple's its items'. `fields`: a program's object's
 * or a token type's fields read already (read_fields), or NULL. *shallow is set to SHALLOW_FIELDS when the key digested is a program's
 * object's or a token type's made of its fields' values and classes alone, and of lists and tuples of such (and a
 * token type's items), to SHALLOW_NAME when it is a
 * function's or a class's name key (what the object memo may keep: memo_parts, named_parts), else 0. */
enum { SHALLOW_FIELDS = 1, SHALLOW_NAME = 2 };
static int
value_digest(TracerObject *self, PyObject *value, PyTypeObject *cls, KeyDigest *digest, const Fields *fields, int *shallow)
{
    *shallow = 0;
    if (self->keys == NULL || !PyTuple_CheckExact(self->keys)) {
        return NO_DIGEST;
    }
    if (cls == &PyList_Type || cls == &PyDict_Type) {  /* container_key's parts, in its order */
        Parts parts = {NULL, digest};
        Py_ssize_t budget = MAX_ITEMS;
        key_digest_start(digest, SHAPE_CONTAINER);
        int made = container_parts(self, &parts, value, cls, 1, &budget);
        PyErr_Clear();
        return made == 1 && !parts.unsettled && key_digest_finish(digest) ? DIGESTED : NO_DIGEST;
    }
    if (cls == &PyTuple_Type) {  /* a parser's tuples of token types and words repeat: yielded tokens, match arguments */
        int unsettled = 0;
        int made = PyTuple_GET_SIZE(value) <= MAX_KEYED_TUPLE && tuple_digest(self, value, digest, &unsettled);
        PyErr_Clear();
        return made && key_digest_finish(digest) ? DIGESTED : NO_DIGEST;
    }
    Parts parts = {NULL, digest};
    int made = 0, object = 0, named = 0;
    long streak = -1;
    int tuple_type = class_member(self, K_TUPLE_TYPES, M_TUPLE_TYPES, cls);
    if (tuple_type == 1) {
        PyObject *content = PyTuple_GET_SIZE(value) <= MAX_KEYED_TUPLE ? tuple_key(self, value, 1, &parts.unsettled) : NULL;
        if (content != NULL) {  /* (cls, content, fields) */
            key_digest_start(digest, SHAPE_TUPLE_TYPE);
            key_digest_add(digest, (PyObject *)cls);
            key_digest_add(digest, content);
            Py_DECREF(content);
            made = fields_parts(self, &parts, value, cls, fields);
        }
        else {
            made = PyErr_Occurred() ? -1 : 0;
        }
    }
    else if (tuple_type == 0 && (made = class_member(self, K_OBJECTS, M_OBJECTS, cls)) == 1) {  /* (object, cls, fields) */
        if (skip_key(self, cls, &streak)) {
            return NO_KEY_OBJECT;
        }
        key_digest_start(digest, SHAPE_OBJECT);
        key_digest_add(digest, (PyObject *)cls);
        made = fields_parts(self, &parts, value, cls, fields);
        object = 1;
    }
    else if (tuple_type == 0 && made == 0 && (made = class_member(self, K_CONTENT_TYPES, M_CONTENT_TYPES, cls)) != 0) {
        PyErr_Clear();
        return NO_DIGEST;  /* an OrderedDict: value_key keys its content, as a dict's */
    }
    else if (tuple_type == 0 && made == 0 && (made = class_member(self, K_NAMED, M_NAMED, cls)) == 1) {
        PyObject *key = name_key(value, cls);  /* a few parts, made once: they are digested as the key holds them */
        key_digest_start(digest, SHAPE_NAMED);
        if (key != NULL) {
            key_digest_add(digest, key);
            Py_DECREF(key);
        }
        made = key != NULL ? 1 : PyErr_Occurred() ? -1 : 0;
        named = made == 1;
    }
    else {
        made = tuple_type < 0 || made < 0 ? -1 : 0;
    }
    if (object && (made == 1 || (made == 0 && !parts.unsettled))) {
        note_key(self, cls, streak, made);
    }
    if (made != 1) {
        PyErr_Clear();
        if (made != 0 || parts.unsettled || tuple_type == 1) {
            return NO_DIGEST;  /* after an error or a table's missing answer value_key says, and for a tuple subclass
                                * without this key: value_key tries its content key (a tuple subclass is a content type) */
        }
        return object ? NO_KEY_OBJECT : NO_KEY;
    }
    if (!key_digest_finish(digest)) {
        return NO_DIGEST;
    }
    *shallow = (object || tuple_type == 1) && !parts.deep ? SHALLOW_FIELDS : named ? SHALLOW_NAME : 0;
    return DIGESTED;
}

static void untrack_tuples(PyObject *value, int depth);

/* The id of `value`'s abstraction without a call into Python where it can: abstracted as Abstraction.abstract does it
 * (the C walk, the type's name as known) and interned as ValueIds.intern does it (a new abstraction gets the next id and
 * one value record: write_value). 1 and *id when done; 0 (no error left set, nothing changed) where
 * Python must: no C walk or a user's repr types (K_WALK None), a type not named yet, a walk that failed, a table due
 * to be cleared. Runs no project code: the walk's own guarantee. Called with the values held (values_begin). */
static int
walked_id(TracerObject *self, PyObject *value, unsigned long long *id)
{
    PyObject *values = TABLE(self, K_VALUES), *walk = TABLE(self, K_WALK);
    if (walk == Py_None || PyDict_GET_SIZE(values) >= self->limits[L_CACHED]) {
        return 0;
    }
    PyObject *name = class_answer(self, TABLE(self, K_NAMES), A_NAMES, Py_TYPE(value));
    if (name == NULL || !PyUnicode_CheckExact(name)) {
        PyErr_Clear();
        return 0;
    }
    Py_INCREF(name);
    int done = 0;
    PyObject *budget = Py_BuildValue("[n]", self->limits[L_ITEMS]), *text = NULL, *abstraction = NULL, *known;
    if (budget == NULL) {
        goto out;
    }
    PyObject *args[4] = {value, (PyObject *)Py_TYPE(value), budget, NULL};
    args[3] = PyLong_FromLong(0);
    text = args[3] != NULL ? PyObject_Vectorcall(walk, args, 4, NULL) : NULL;
    Py_XDECREF(args[3]);
    if (text == NULL || (text != Py_None && !PyUnicode_CheckExact(text))) {
        goto out;  /* a failed walk: Python says what its own walk makes of it */
    }
    if (text != Py_None && PyUnicode_GET_LENGTH(text) > self->limits[L_REPR]) {  /* a prefix and a digest of the whole */
        Py_SETREF(text, capped(text, self->limits[L_REPR]));
        if (text == NULL) {
            goto out;
        }
    }
    abstraction = PyTuple_Pack(2, name, text);
    if (abstraction == NULL) {
        goto out;
    }
    known = PyDict_GetItemWithError(values, abstraction);
    if (known != NULL) {
        if (!PyLong_CheckExact(known)) {
            goto out;
        }
        *id = PyLong_AsUnsignedLongLong(known);
    }
    else {
        if (PyErr_Occurred()) {
            goto out;
        }
        PyObject *fresh = PyIter_Next(TABLE(self, K_NEXT));
        if (fresh == NULL || PyDict_SetItem(values, abstraction, fresh) < 0) {
            Py_XDECREF(fresh);
            goto out;
        }
        *id = PyLong_AsUnsignedLongLong(fresh);
        int failed = PyErr_Occurred() || write_value(self, TABLE(self, K_WRITE), fresh, *id, name, text) < 0;
        Py_DECREF(fresh);
        if (failed) {
            goto out;
        }
    }
    done = !PyErr_Occurred();
out:
    if (!done) {
        PyErr_Clear();
    }
    Py_XDECREF(abstraction);
    Py_XDECREF(text);
    Py_XDECREF(budget);
    Py_DECREF(name);
    return done;
}

/* ValueIds._by_key for a key it does not know yet, without a call into Python where it can: the value walked and
 * interned (walked_id) and kept under its key. 1 and *id when done; 0 (no error left set, nothing kept under the key)
 * where Python must. */
static int
interned_id(TracerObject *self, TStateObject *st, PyObject *key, PyObject *value, unsigned long long *id)
{
    PyObject *by_object = TABLE(self, K_BY_OBJECT);
    if (PyDict_GET_SIZE(by_object) >= self->limits[L_CACHED]) {
        return 0;
    }
    Held held;
    if (values_begin(st, &held)) {
        return 0;
    }
    int done = walked_id(self, value, id);
    if (done) {
        untrack_tuples(key, 0);
        PyObject *number = PyLong_FromUnsignedLongLong(*id);
        done = number != NULL && PyDict_SetItem(by_object, key, number) == 0;
        Py_XDECREF(number);
        if (!done) {
            PyErr_Clear();
        }
    }
    values_end(st, &held);
    return done;
}

/* The id ValueIds._by_key gives a key it did not know: the value abstracted once for that key (no second key made). */
static unsigned long long
id_from_key(TracerObject *self, TStateObject *st, PyObject *key, PyObject *value)
{
    unsigned long long id;
    if (interned_id(self, st, key, value, &id)) {
        Py_DECREF(key);
        return id;
    }
    Held held;
    if (values_begin(st, &held)) {
        Py_DECREF(key);
        return NO_VALUE;
    }
    PyObject *found = PyObject_CallFunctionObjArgs(TABLE(self, K_BY_KEY), key, value, NULL);
    values_end(st, &held);
    Py_DECREF(key);
    return answered_id(found);
}

/* The id of a program's object that has no key and never will: walked and interned in C, as ValueIds.id_of would
 * abstract and intern it (it has no key to look up), or ValueIds.id_of's where C cannot. */
static unsigned long long
unkeyed_object_id(TracerObject *self, TStateObject *st, PyObject *value)
{
    unsigned long long id;
    Held held;
    if (!values_begin(st, &held)) {
        int done = walked_id(self, value, &id);
        values_end(st, &held);
        if (done) {
            return id;
        }
    }
    return id_from(st, self->value_id, value);
}

/* by_type's id for `cls` (borrowed), as PyDict_GetItemWithError answers; not asked for a class whose values vary. */
static PyObject *
by_type_id(TracerObject *self, PyTypeObject *cls)
{
    if (self->keys != NULL) {
        TypeFact *fact = fact_of(self, cls);
        if (fact == NULL) {
            return NULL;
        }
        if (fact->members & M_VARYING) {
            return NULL;
        }
        return class_answer(self, self->by_type, A_BY_TYPE, cls);
    }
    return PyDict_GetItemWithError(self->by_type, (PyObject *)cls);
}

/* value_id of a value without a by_type id, by its key (its digest found in the memo, else the keyed tables, else
 * Python); `fields`, *shallow: as value_digest has them; *keyed: the id is its key's (not a walk's, nor Python's). */
static unsigned long long
keyed_value_id(TracerObject *self, TStateObject *st, PyObject *value, PyTypeObject *cls, const Fields *fields, int *shallow,
               int *keyed)
{
    unsigned long long known;
    KeyDigest digest;
    int digested = value_digest(self, value, cls, &digest, fields, shallow);
    *keyed = 1;
    if (digested == DIGESTED && key_memo_get(&self->memo, &digest, &known)) {
        return known;
    }
    PyObject *key = NULL;
    int unsettled = 0;
    if (digested < NO_DIGEST || !keyed_id(self, value, cls, &known, &key, &unsettled)) {
        if (key == NULL) {  /* a value no key caches (a type no key of any kind caches, a list, dict or tuple whose parts
                             * make none): ValueIds.id_of would walk and intern it */
            int walked = digested == NO_KEY_OBJECT || ((cls == &PyList_Type || cls == &PyDict_Type || cls == &PyTuple_Type) && !unsettled)
                || (digested == NO_KEY && class_member(self, K_UNKEYED, M_UNKEYED, cls) == 1)
                || (digested == NO_DIGEST && !unsettled && class_member(self, K_CONTENT_TYPES, M_CONTENT_TYPES, cls) == 1);
            PyErr_Clear();
            *keyed = 0;
            return walked ? unkeyed_object_id(self, st, value) : id_from(st, self->value_id, value);
        }
        known = id_from_key(self, st, Py_NewRef(key), value);
    }
    if (digested == DIGESTED && known != NO_VALUE && key_memo_put(&self->memo, &digest, known, key, (size_t)self->limits[L_CACHED]) < 0) {
        PyErr_Clear();  /* found by its key next time */
    }
    Py_DECREF(key);
    return known;
}

/* Whether the object memo may hold objects of `cls`: a program's class whose objects are keyed by their fields. */
static int
memo_candidate(TracerObject *self, PyTypeObject *cls)
{
    if (self->keys == NULL || !PyTuple_CheckExact(self->keys) || cls == &PyTuple_Type || cls == &PyList_Type || cls == &PyDict_Type) {
        return 0;
    }
    int object = class_member(self, K_OBJECTS, M_OBJECTS, cls) == 1 && class_member(self, K_TUPLE_TYPES, M_TUPLE_TYPES, cls) == 0;
    PyErr_Clear();
    return object;
}

/* Whether the object memo may hold `item` as a tuple's item and compare it by identity: it cannot change where a key
 * reads it (a str, bytes, a number, None, a class, a tuple of such, or a tuple subclass's content: a lexer's token
 * type), and holding it changes nothing the program can see: no weak reference to it, no finalizer, and a tuple
 * subclass's instance with fields of its own (which may hold anything) only when the keyed tables hold it already. */
static int
held_safe(TracerObject *self, PyObject *item, int depth)
{
    PyTypeObject *cls = Py_TYPE(item);
    if (cls == &PyUnicode_Type || cls == &PyLong_Type || cls == &PyBool_Type || item == Py_None || cls == &PyBytes_Type
        || cls == &PyFloat_Type || PyType_Check(item)) {
        return 1;
    }
    if (!PyTuple_Check(item) || depth >= MAX_KEYED_DEPTH || cls->tp_weaklistoffset != 0 || cls->tp_finalize != NULL || cls->tp_del != NULL
        || (cls != &PyTuple_Type && cls->tp_dictoffset != 0 && kept_content(self, item) == NULL)) {
        return 0;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(item); k++) {
        if (!held_safe(self, PyTuple_GET_ITEM(item, k), depth + 1)) {
            return 0;
        }
    }
    return 1;
}

/* value_id of an exact tuple: found again in the object memo while it is the same tuple of the same items, else by its
 * key, and kept in the memo when that key made its id and its items may be held. */
static unsigned long long
tuple_value_id(TracerObject *self, TStateObject *st, PyObject *value)
{
    Py_ssize_t n = PyTuple_GET_SIZE(value);
    PyObject **items = ((PyTupleObject *)value)->ob_item;
    int memo = self->keys != NULL && PyTuple_CheckExact(self->keys) && n <= OBJECT_MEMO_PARTS, shallow, keyed;
    uint64_t epoch = self->tables_epoch;
    unsigned long long id;
    ObjectMemoKey key = {&PyTuple_Type, n, NULL, items, NULL};
    if (memo && object_memo_get(&self->objects, &key, &id)) {
        return id;
    }
    id = keyed_value_id(self, st, value, &PyTuple_Type, NULL, &shallow, &keyed);
    if (memo && keyed && id != NO_VALUE && epoch == self->tables_epoch && held_safe(self, value, 0)
        && object_memo_put(&self->objects, &key, id) < 0) {
        PyErr_Clear();  /* found by its key next time */
    }
    return id;
}

/* The parts of an object's key the memo compares, its fields in order (a list or a tuple followed by its items), into
 * `key` (its arrays of OBJECT_MEMO_PARTS): 1, or 0 when they do not fit. A list's items are held (memo_parts_release):
 * the key is made of them before any call into Python, which may let another thread or a finalizer change the list,
 * and the memo keeps what the key was made of. */
static int
memo_parts(const Fields *fields, PyObject *unset, ObjectMemoKey *key)
{
    PyObject **names = (PyObject **)key->names, **parts = (PyObject **)key->values;
    uint8_t *modes = (uint8_t *)key->modes;
    Py_ssize_t m = key->n;  /* after a token type's items */
    for (Py_ssize_t k = 0; k < fields->n; k++) {
        PyObject *item = fields->items[k];
        int container = PyList_CheckExact(item) || PyTuple_CheckExact(item);
        Py_ssize_t size = container ? Py_SIZE(item) : 0;
        if (m + 1 + size > OBJECT_MEMO_PARTS) {
            key->n = m;  /* what memo_parts_release lets go of */
            return 0;
        }
        names[m] = fields->names[k];
        parts[m] = item;
        modes[m++] = container ? MEMO_CONTAINER : object_memo_by_value(item, unset) ? MEMO_BY_IDENTITY : MEMO_BY_CLASS;
        for (Py_ssize_t i = 0; i < size; i++) {  /* a list's items: read again at the next lookup, as it may change */
            PyObject *inner = PyList_CheckExact(item) ? PyList_GET_ITEM(item, i) : PyTuple_GET_ITEM(item, i);
            names[m] = NULL;
            parts[m] = Py_NewRef(inner);
            modes[m++] = object_memo_by_value(inner, unset) ? MEMO_BY_IDENTITY : MEMO_BY_CLASS;
        }
    }
    key->n = m;
    return 1;
}

/* Lets go of the container items memo_parts held. */
static void
memo_parts_release(ObjectMemoKey *key)
{
    for (Py_ssize_t m = 0; m < key->n; m++) {
        if (key->names[m] == NULL) {
            Py_DECREF((PyObject *)key->values[m]);
        }
    }
    key->n = 0;
}

/* The parts of a token type's key (a tuple subclass keyed by its content and its fields, value_key), into `key`: its
 * items, each part of the key by its value (held: memo_parts_release), then its fields as memo_parts has them, read
 * into `fields` where that needs no call (read_fields). 1, or 0 when it has other items or its fields cannot be read so. */
static int
tuple_type_parts(TracerObject *self, PyObject *value, PyTypeObject *cls, Fields *fields, ObjectMemoKey *key)
{
    if (self->keys == NULL || !PyTuple_CheckExact(self->keys) || !PyTuple_Check(value) || PyTuple_GET_SIZE(value) > MAX_KEYED_TUPLE
        || class_member(self, K_TUPLE_TYPES, M_TUPLE_TYPES, cls) != 1) {
        PyErr_Clear();
        return 0;
    }
    PyObject *unset = TABLE(self, K_UNSET), **names = (PyObject **)key->names, **parts = (PyObject **)key->values;
    uint8_t *modes = (uint8_t *)key->modes;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); i++) {
        PyObject *item = PyTuple_GET_ITEM(value, i);
        if (!object_memo_by_value(item, NULL)) {  /* a str, an int, a bool or None: taken by value */
            return 0;
        }
        names[i] = NULL;
        parts[i] = Py_NewRef(item);
        modes[i] = MEMO_BY_IDENTITY;
        key->n = i + 1;
    }
    int unsettled = 0;
    PyObject *layout = layout_of(self, cls, &unsettled);
    int read = layout != NULL && read_fields(self, value, layout, fields, &unsettled, 1) == 1 && memo_parts(fields, unset, key);
    PyErr_Clear();
    return read;
}

/* The parts a function's or a class's name key is made of (name_key), into `key`, held (memo_parts_release): a
 * function's module and qualified name as they are now, a class itself. 1, or 0 for any other value. A function is not
 * held: its closure may hold anything, and its id is its name's alone. */
static int
named_parts(PyObject *value, PyTypeObject *cls, ObjectMemoKey *key)
{
    PyObject **names = (PyObject **)key->names, **parts = (PyObject **)key->values;
    uint8_t *modes = (uint8_t *)key->modes;
    if (cls == &PyFunction_Type) {
        PyObject *module, *qualname;
        if (!function_name(value, &module, &qualname)) {
            return 0;
        }
        parts[0] = Py_NewRef(module);
        parts[1] = Py_NewRef(qualname);
        key->n = 2;
    }
    else if (PyType_Check(value)) {
        parts[0] = Py_NewRef(value);
        key->n = 1;
    }
    else {
        return 0;
    }
    for (Py_ssize_t m = 0; m < key->n; m++) {
        names[m] = NULL;
        modes[m] = MEMO_BY_IDENTITY;
    }
    return 1;
}

/* value_id of a value without a by_type id: a program's object or a token type whose fields are what they were when
 * its id was last found, or a function or class of the same name, is found again in the object memo (fields read
 * once, where that is cheap: slots, inline attributes, a __dict__ that exists), else by its key, and kept in the memo
 * when its key allows. */
static unsigned long long
object_value_id(TracerObject *self, TStateObject *st, PyObject *value, PyTypeObject *cls)
{
    if (cls == &PyTuple_Type) {
        return tuple_value_id(self, st, value);
    }
    Fields fields;
    fields.n = 0;
    fields.namespace = NULL;
    int read = 0, named = 0, unsettled = 0, shallow = 0, keyed = 0;
    uint64_t epoch = self->tables_epoch;
    unsigned long long id;
    PyObject *names[OBJECT_MEMO_PARTS], *parts[OBJECT_MEMO_PARTS];
    uint8_t modes[OBJECT_MEMO_PARTS];
    ObjectMemoKey key = {cls, 0, names, parts, modes};
    if (memo_candidate(self, cls)) {
        PyObject *layout = layout_of(self, cls, &unsettled);
        read = layout != NULL && read_fields(self, value, layout, &fields, &unsettled, 1) == 1
            && memo_parts(&fields, TABLE(self, K_UNSET), &key);
        PyErr_Clear();
        if (read && object_memo_get(&self->objects, &key, &id)) {
            memo_parts_release(&key);
            fields_release(&fields);
            return id;
        }
    }
    else if ((read = tuple_type_parts(self, value, cls, &fields, &key))) {
        if (object_memo_get(&self->objects, &key, &id)) {
            memo_parts_release(&key);
            fields_release(&fields);
            return id;
        }
    }
    else if (self->keys != NULL && PyTuple_CheckExact(self->keys) && (named = named_parts(value, cls, &key))
             && object_memo_get(&self->objects, &key, &id)) {
        memo_parts_release(&key);
        return id;
    }
    id = keyed_value_id(self, st, value, cls, read ? &fields : NULL, &shallow, &keyed);
    if (((read && shallow == SHALLOW_FIELDS) || (named && shallow == SHALLOW_NAME)) && keyed && id != NO_VALUE && epoch == self->tables_epoch
        && object_memo_put(&self->objects, &key, id) < 0) {
        PyErr_Clear();  /* found by its key next time */
    }
    memo_parts_release(&key);
    fields_release(&fields);
    return id;
}

/* A value's id; NO_VALUE when abstracting it failed (the traced program never sees histeg's errors). */
static unsigned long long
value_id(TracerObject *self, TStateObject *st, PyObject *value)
{
    PyTypeObject *cls = Py_TYPE(value);
    if (cls == &PyLong_Type) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (!overflow && x >= -(long long)INT_BIAS && x < (long long)INT_BIAS) {
            return ((unsigned long long)(x + (long long)INT_BIAS)) | INLINE_INT;
        }
        PyErr_Clear();
    }
    PyObject *found;
    if (cls == &PyUnicode_Type || cls == &PyBool_Type || value == Py_None) {  /* the commonest values: no call into Python */
        found = PyDict_GetItemWithError(self->by_value, value);
        if (found != NULL) {
            unsigned long long known = PyLong_AsUnsignedLongLong(found);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                return NO_VALUE;
            }
            return known;
        }
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return NO_VALUE;
        }
        if (cls == &PyUnicode_Type && self->keys != NULL && PyUnicode_GET_LENGTH(value) <= self->limits[L_KEY_LENGTH]) {
            /* a string not in by_value: ValueIds.id_of's way, keyed by (str, value), then remembered by value */
            PyObject *key = PyTuple_Pack(2, (PyObject *)&PyUnicode_Type, value);
            unsigned long long id;
            int known = key != NULL ? known_id(self, key, &id) : -1;
            if (known == 1 || (known == 0 && interned_id(self, st, key, value, &id))) {
                Py_DECREF(key);
                PyObject *number = PyDict_GET_SIZE(self->by_value) < self->limits[L_CACHED] ? PyLong_FromUnsignedLongLong(id) : NULL;
                if (number != NULL) {
                    if (PyDict_SetItem(self->by_value, value, number) < 0) {
                        PyErr_Clear();
                    }
                    Py_DECREF(number);
                }
                return id;
            }
            Py_XDECREF(key);
            PyErr_Clear();
        }
        else if (cls == &PyUnicode_Type && self->keys != NULL) {  /* too long for a key: ValueIds.id_of walks and interns it */
            return unkeyed_object_id(self, st, value);
        }
        return id_from(st, self->value_id, value);
    }
    found = by_type_id(self, cls);
    if (found == NULL) {
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return NO_VALUE;
        }
        return object_value_id(self, st, value, cls);
    }
    unsigned long long id = PyLong_AsUnsignedLongLong(found);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return NO_VALUE;
    }
    return id;
}

/* The id of a secret (a parameter or return value recorded through `fn`, ValueIds.redacted_id: its keyed digest).
 * A value with a key has its secret remembered under the digest of that key: equal keys show equal text, and the
 * secret is the digest of that text, so a lexer's `token` costs no call into Python after the first of its kind.
 * Nothing of the value is interned: the key is made and looked up, never handed to the keyed tables. */
static unsigned long long
secret_id(TracerObject *self, TStateObject *st, PyObject *fn, PyObject *value)
{
    PyTypeObject *cls = Py_TYPE(value);
    KeyDigest digest;
    unsigned long long id;
    int shallow;
    int digested = self->keys != NULL ? value_digest(self, value, cls, &digest, NULL, &shallow) : NO_DIGEST;
    if (digested == DIGESTED && key_memo_get(&self->secrets, &digest, &id)) {
        return id;
    }
    PyErr_Clear();
    id = id_from(st, fn, value);
    if (digested == DIGESTED && id != NO_VALUE) {
        PyObject *key = NULL;
        int unsettled = 0;
        unsigned long long known;
        (void)keyed_id(self, value, cls, &known, &key, &unsettled);
        if (key != NULL && key_memo_put(&self->secrets, &digest, id, key, (size_t)self->limits[L_CACHED]) < 0) {
            PyErr_Clear();  /* asked again next time */
        }
        Py_XDECREF(key);
        PyErr_Clear();
    }
    return id;
}

/* -- line budgets ---------------------------------------------------------- */

static int
write_marker(TStateObject *st, unsigned int op, uint32_t func_id)
{
    if (buf_reserve(st, 3) < 0) {
        return -1;
    }
    uint16_t *w = st->buf + st->len;
    w[0] = (uint16_t)op;
    put_id(w + 1, func_id);
    st->len += 3;
    return 0;
}

static int
switch_lines(TracerObject *self, FuncInfo *fi, int on)
{
    Held held;
    if (hold_signals_for_call(&held) < 0) {
        return -1;
    }
    PyObject *result = PyObject_CallFunctionObjArgs(self->switch_lines, fi->code, on ? Py_True : Py_False, NULL);
    release_signals(&held);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

/* `fi`'s counts are those of the current entry point (they start afresh in each). */
static inline void
count_in_entry(TracerObject *self, FuncInfo *fi)
{
    if (fi->epoch != self->epoch) {
        fi->epoch = self->epoch;
        fi->spent = fi->lines = 0;
    }
}

/* Streams are shipped in chunks, so one thread's marker says nothing of when another thread's events ran: each stream
 * gets an OFF marker of every function whose lines are off before its next call or resumption (and at once when a call
 * it runs loses lines), where it happened in that thread's own time (events.py, splitting). */
static int
tell(TracerObject *self, TStateObject *st)
{
    if (st->told_epoch != self->off_epoch) {
        st->told_epoch = self->off_epoch;
        st->told = 0;
    }
    for (; st->told < self->noff; st->told++) {
        if (write_marker(st, OP_LINES_OFF, self->lines_off[st->told]->func_id) < 0) {
            return -1;
        }
    }
    return 0;
}

static inline int
untold(TracerObject *self, TStateObject *st)
{
    return st->told != self->noff || st->told_epoch != self->off_epoch;
}

/* Whether a call of `fi` is running on the thread (on its stack). */
static int
runs(TStateObject *st, FuncInfo *fi)
{
    for (Py_ssize_t d = 0; d < st->depth; d++) {
        if (st->stack[d].fi == fi) {
            return 1;
        }
    }
    return 0;
}

/* The first call beyond the budget, or the line event that reaches the line cap: the function's line events go off
 * until the next entry point. */
static int
spend_lines(TracerObject *self, TStateObject *st, FuncInfo *fi)
{
    if (self->noff == self->offcap) {
        size_t cap = self->offcap ? self->offcap * 2 : 64;
        FuncInfo **grown = PyMem_Realloc(self->lines_off, cap * sizeof(FuncInfo *));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->lines_off = grown;
        self->offcap = cap;
    }
    if (switch_lines(self, fi, 0) < 0) {
        return -1;
    }
    fi->off = 1;
    self->lines_off[self->noff++] = fi;
    if (tell(self, st) < 0) {
        return -1;
    }
    Py_ssize_t count = PyList_GET_SIZE(self->states);
    for (Py_ssize_t i = 0; count > 1 && i < count; i++) {  /* another thread's running call of it loses lines from now on */
        TStateObject *other = (TStateObject *)PyList_GET_ITEM(self->states, i);
        if (other != st && other->index >= 0 && runs(other, fi) && tell(self, other) < 0) {
            return -1;
        }
    }
    return 0;
}

/* A new entry point: every function whose lines went off records them again, and every stream told they were off is
 * told they are on, in the order they went off, as the Python backend does. */
static int
lines_back_on(TracerObject *self)
{
    for (size_t i = 0; i < self->noff; i++) {
        FuncInfo *fi = self->lines_off[i];
        fi->off = 0;
        if (switch_lines(self, fi, 1) < 0) {
            return -1;
        }
    }
    Py_ssize_t count = PyList_GET_SIZE(self->states);
    for (Py_ssize_t i = 0; i < count; i++) {
        TStateObject *other = (TStateObject *)PyList_GET_ITEM(self->states, i);
        for (size_t k = 0; other->index >= 0 && other->told_epoch == self->off_epoch && k < other->told; k++) {
            if (write_marker(other, OP_LINES_ON, self->lines_off[k]->func_id) < 0) {
                return -1;
            }
        }
    }
    self->noff = 0;
    self->off_epoch++;
    return 0;
}

/* -- callbacks ------------------------------------------------------------- */

/* The collector's schedule as a callback found it: the young generation's count and how many collections had run. */
typedef struct {
    int young;
    Py_ssize_t runs;
} GcMark;

static inline Py_ssize_t
collections_run(const TracerObject *self)
{
    return *self->gc_runs[0] + *self->gc_runs[1] + *self->gc_runs[2];
}

static inline GcMark
gc_mark(const TracerObject *self)
{
    GcMark mark = {0, 0};
    if (self->gc_young != NULL) {
        mark.young = *self->gc_young;
        mark.runs = collections_run(self);
    }
    return mark;
}

/* At a callback's end: the containers it allocated and kept no longer bring the program's next collection nearer
 * (see _interpreter.c). A collection that ran meanwhile started the count afresh, which is left as it is. */
static inline void
gc_settle(const TracerObject *self, GcMark mark)
{
    if (self->gc_young != NULL && *self->gc_young > mark.young && collections_run(self) == mark.runs) {
        *self->gc_young = mark.young;
    }
}

static PyObject *py_start(TracerObject *self, PyObject *const *args, Py_ssize_t nargs);

static PyObject *
tracer_py_start(TracerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    GcMark mark = gc_mark(self);
    PyObject *result = py_start(self, args, nargs);
    gc_settle(self, mark);
    return result;
}

/* Every call of traced code lands here. One function on purpose: the checks (selected, budgets, recursion),
 * the thread's state and the values share their early exits and locals, and a split would add calls to the
 * hottest path of the tracer. */
static PyObject *
py_start(TracerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1) {
        Py_RETURN_NONE;
    }
    if (self->instrument == NULL) {
        Py_RETURN_NONE;  /* cleared */
    }
    PyObject *code = args[0];
    FuncInfo *fi = table_get(self, code);
    if (fi == NULL) {
        fi = instrument(self, code);
        if (fi == NULL) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            return Py_NewRef(self->disable);
        }
    }
    TStateObject *st = current_state(self, 1);
    if (st == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    if (st->diverting) {
        Py_RETURN_NONE;
    }
    if (st->depth == 0) {
        self->epoch++;
        if (self->noff && lines_back_on(self) < 0) {
            return NULL;
        }
    }
    if (untold(self, st) && tell(self, st) < 0) {
        return NULL;
    }
    count_in_entry(self, fi);
    fi->spent++;
    if (self->line_budget && fi->spent == self->line_budget + 1 && !fi->off && spend_lines(self, st, fi) < 0) {
        return NULL;
    }
    Py_ssize_t nparams = self->capture ? fi->nparams : 0;
    /* no parameter value to capture: the count and the ids are left out (format.CALL_BARE) */
    int bare = self->capture && (nparams == 0 || (self->budget && fi->spent > self->budget));
    if (buf_reserve(st, 8 + 2 * nparams) < 0) {
        return NULL;
    }
    uint16_t *w = st->buf + st->len;
    Py_ssize_t n = 0;
    unsigned int op = bare ? OP_CALL | CALL_BARE : OP_CALL;
    if (st->depth == 0) {
        op |= CALL_ROOT;
    }
    if (fi->suspends) {
        op |= CALL_GEN;
    }
    w[n++] = (uint16_t)op;
    put_id(w + n, fi->func_id);
    n += 2;
    if (st->depth == 0) {
        put_id(w + n, self->label);
        n += 2;
    }
    GenCallObject *gen = NULL;
    if (fi->suspends) {
        gen = PyObject_New(GenCallObject, &GenCallType);
        if (gen == NULL) {
            return NULL;
        }
        gen->fi = fi;
        gen->call_id = ++self->gen_ids;
        gen->frame_key = PyEval_GetFrame();
        gen->owner = st;
        put_id(w + n, gen->call_id);
        n += 2;
    }
    if (!bare) {
        w[n++] = (uint16_t)nparams;
    }
    st->len += n;
    int pushed = stack_push(st, code, fi, gen);
    Py_XDECREF(gen);
    if (pushed < 0) {
        return NULL;
    }
    if (histeg_signal_due() && PyErr_CheckSignals() < 0) {  /* run where the callee's first check runs it; the call raised */
        if (!bare) {
            memset(st->buf + st->len, 0, (size_t)(2 * nparams) * sizeof(uint16_t));
            st->len += 2 * nparams;
        }
        return NULL;
    }
    if (bare || !self->capture) {
        Py_RETURN_NONE;
    }
    PyFrameObject *frame = NULL;
    for (Py_ssize_t i = 0; i < nparams; i++) {
        unsigned long long id = NO_VALUE;
        int read;
        PyObject *value = histeg_frame_parameter(code, i, &read);
        if (!read) {  /* the frame's object, made once for this call */
            frame = frame != NULL ? frame : PyEval_GetFrame();
            value = frame ? PyFrame_GetVar(frame, PyTuple_GET_ITEM(fi->names, i)) : NULL;
        }
        if (value == NULL) {
            PyErr_Clear();
        }
        else {
            id = (i < 63 && (fi->redact >> i) & 1) ? secret_id(self, st, fi->redacted, value) : value_id(self, st, value);
            Py_DECREF(value);
        }
        /* reserved above: while value_id runs user code, this thread's events are dropped */
        put_id(st->buf + st->len, id);
        st->len += 2;
    }
    Py_RETURN_NONE;
}

static PyObject *
leave(TracerObject *self, PyObject *const *args, Py_ssize_t nargs, unsigned int op)
{
    if (nargs < 3) {
        Py_RETURN_NONE;
    }
    TStateObject *st = current_state(self, 0);
    if (st == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (st->diverting || st->depth == 0 || st->stack[st->depth - 1].code != args[0]) {
        Py_RETURN_NONE;  /* a frame that started before tracing, or code that is not ours (unwind is global) */
    }
    StackItem top = st->stack[--st->depth];
    if (op == OP_YIELD && top.gen != NULL && susp_put(&self->suspended, top.gen->frame_key, top.gen) < 0) {
        Py_DECREF(top.gen);
        return NULL;
    }
    Py_XDECREF(top.gen);
    unsigned long long id = NO_VALUE;
    if (self->capture && !(self->budget && top.fi->spent > self->budget)) {
        id = (top.fi->redact >> 63) ? secret_id(self, st, top.fi->redacted, args[2]) : value_id(self, st, args[2]);
    }
    if (buf_reserve(st, 3) < 0) {
        return NULL;
    }
    uint16_t *w = st->buf + st->len;
    if (id == NO_VALUE && op == OP_RETURN) {
        w[0] = (uint16_t)OP_RETURN_BARE;
        st->len += 1;
    }
    else {
        w[0] = (uint16_t)op;
        put_id(w + 1, id);
        st->len += 3;
    }
    if (st->depth == 0 || st->len > CHUNK_WORDS) {
        if (ship(self, st, 0) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
settled_leave(TracerObject *self, PyObject *const *args, Py_ssize_t nargs, unsigned int op)
{
    GcMark mark = gc_mark(self);
    PyObject *result = leave(self, args, nargs, op);
    gc_settle(self, mark);
    return result;
}

static PyObject *
tracer_py_return(TracerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return settled_leave(self, args, nargs, OP_RETURN);
}

static PyObject *
tracer_py_yield(TracerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return settled_leave(self, args, nargs, OP_YIELD);
}

static PyObject *
tracer_py_unwind(TracerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return settled_leave(self, args, nargs, OP_RAISE);
}

/* PY_RESUME and PY_THROW: push the suspended call of the running frame again. */
static PyObject *
tracer_py_resume(TracerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    TStateObject *st = current_state(self, 0);
    if (st == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (st != NULL && st->diverting) {
        Py_RETURN_NONE;
    }
    if (!self->ready) {
        Py_RETURN_NONE;  /* cleared */
    }
    GenCallObject *gen = susp_pop(&self->suspended, PyEval_GetFrame());  /* the reference the table held */
    if (gen == NULL) {
        Py_RETURN_NONE;  /* a generator that started before tracing or inside histeg's repr */
    }
    if (st == NULL && (st = current_state(self, 1)) == NULL) {
        Py_DECREF(gen);
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    if (gen->owner != st) {  /* resumed on another thread: the events before must precede this RESUME */
        if (ship(self, gen->owner, 1) < 0) {
            Py_DECREF(gen);
            return NULL;
        }
        gen->owner = st;
    }
    if ((untold(self, st) && tell(self, st) < 0) || stack_push(st, (PyObject *)gen->fi->code, gen->fi, gen) < 0 || buf_reserve(st, 3) < 0) {
        Py_DECREF(gen);
        return NULL;
    }
    uint16_t *w = st->buf + st->len;
    w[0] = (uint16_t)OP_RESUME;
    put_id(w + 1, gen->call_id);
    st->len += 3;
    Py_DECREF(gen);
    Py_RETURN_NONE;
}

static PyObject *
tracer_line(TracerObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2) {
        Py_RETURN_NONE;
    }
    TStateObject *st = current_state(self, 1);
    if (st == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    if (st->diverting) {
        Py_RETURN_NONE;
    }
    PyObject *number = args[1];
    long line;
    if (PyLong_CheckExact(number) && PyUnstable_Long_IsCompact((PyLongObject *)number)) {  /* every line number: no call */
        line = (long)PyUnstable_Long_CompactValue((PyLongObject *)number);
    }
    else if ((line = PyLong_AsLong(number)) == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (st->len == st->cap && buf_reserve(st, 1) < 0) {
        return NULL;
    }
    st->buf[st->len++] = (uint16_t)line;
    if (self->line_cap && st->depth && st->stack[st->depth - 1].code == args[0]) {  /* a line of the running call */
        FuncInfo *fi = st->stack[st->depth - 1].fi;
        count_in_entry(self, fi);  /* a generator may resume in a later entry point */
        if (++fi->lines == self->line_cap && !fi->off && spend_lines(self, st, fi) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* -- control (from the Python collector) ----------------------------------- */

static PyObject *
tracer_close_stale(TracerObject *self, PyObject *Py_UNUSED(ignored))
{
    TStateObject *st = current_state(self, 0);
    if (st == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (st->depth == 0 || st->index < 0) {
        Py_RETURN_NONE;
    }
    while (st->depth > 0) {
        StackItem top = st->stack[--st->depth];
        if (top.gen != NULL) {
            Py_XDECREF(susp_pop(&self->suspended, top.gen->frame_key));
            Py_DECREF(top.gen);
        }
        if (buf_reserve(st, 3) < 0) {
            return NULL;
        }
        uint16_t *w = st->buf + st->len;
        w[0] = (uint16_t)OP_RAISE;
        put_id(w + 1, NO_VALUE);
        st->len += 3;
    }
    if (ship(self, st, 1) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
tracer_ship_all(TracerObject *self, PyObject *Py_UNUSED(ignored))
{
    if (self->states == NULL) {
        Py_RETURN_NONE;
    }
    Py_ssize_t count = PyList_GET_SIZE(self->states);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (ship(self, (TStateObject *)PyList_GET_ITEM(self->states, i), 1) < 0) {
            return NULL;
        }
    }
    if (ship_values(self) < 0) {  /* values no chunk named yet */
        return NULL;
    }
    Py_RETURN_NONE;
}

/* values_to(records): new values' records go to records(bytes) in batches (None: one call of the keyed tables'
 * writer per value). */
static PyObject *
tracer_values_to(TracerObject *self, PyObject *records)
{
    if (records != Py_None && !PyCallable_Check(records)) {
        PyErr_SetString(PyExc_TypeError, "histeg: values_to takes a callable or None");
        return NULL;
    }
    if (ship_values(self) < 0) {
        return NULL;
    }
    Py_XSETREF(self->records, records == Py_None ? NULL : Py_NewRef(records));
    Py_RETURN_NONE;
}

/* Empties what was kept of the value tables: its ids and answers were the tables bound before. */
static void
forget_tables(TracerObject *self)
{
    key_memo_clear(&self->memo);
    key_memo_clear(&self->secrets);
    type_facts_clear(&self->facts);
    object_memo_clear(&self->objects);
    self->tables_epoch++;
}

static int
bind(TracerObject *self, PyObject *new_thread, PyObject *chunk, PyObject *by_type, PyObject *by_value, PyObject *value_id)
{
    if (!PyCallable_Check(new_thread) || !PyCallable_Check(chunk) || !PyDict_Check(by_type) || !PyDict_Check(by_value)
        || !PyCallable_Check(value_id)) {
        PyErr_SetString(PyExc_TypeError, "histeg: bad tracer bindings");
        return -1;
    }
    Py_XSETREF(self->new_thread, Py_NewRef(new_thread));
    Py_XSETREF(self->chunk, Py_NewRef(chunk));
    Py_XSETREF(self->by_type, Py_NewRef(by_type));
    type_facts_clear(&self->facts);  /* its by_type answers were another table's */
    object_memo_clear(&self->objects);
    self->tables_epoch++;
    Py_XSETREF(self->by_value, Py_NewRef(by_value));
    Py_XSETREF(self->value_id, Py_NewRef(value_id));
    return 0;
}

/* keyed(tables): the tables keyed_id reads (ValueIds.native_tables()), bound again after each reset. */
static PyObject *
tracer_keyed(TracerObject *self, PyObject *tables)
{
    if (!PyTuple_CheckExact(tables) || PyTuple_GET_SIZE(tables) != K_COUNT || !PyDict_Check(PyTuple_GET_ITEM(tables, K_BY_OBJECT))
        || !PyCallable_Check(PyTuple_GET_ITEM(tables, K_BY_KEY))
        || !PyAnySet_Check(PyTuple_GET_ITEM(tables, K_OBJECTS)) || !PyAnySet_Check(PyTuple_GET_ITEM(tables, K_TUPLE_TYPES))
        || !PyAnySet_Check(PyTuple_GET_ITEM(tables, K_CONTENT_TYPES))
        || !PyDict_Check(PyTuple_GET_ITEM(tables, K_CONTENTS)) || !PyDict_Check(PyTuple_GET_ITEM(tables, K_LAYOUTS))
        || !PyDict_Check(PyTuple_GET_ITEM(tables, K_PLAIN)) || !PyDict_Check(PyTuple_GET_ITEM(tables, K_KINDS))
        || !PyAnySet_Check(PyTuple_GET_ITEM(tables, K_SHOWN_KINDS)) || !PyDict_Check(PyTuple_GET_ITEM(tables, K_SHOWN_TYPES))
        || !PyDict_Check(PyTuple_GET_ITEM(tables, K_CONTENT_BASES)) || !PyAnySet_Check(PyTuple_GET_ITEM(tables, K_NAMED))
        || !PyAnySet_Check(PyTuple_GET_ITEM(tables, K_UNKEYED))
        || !(PyTuple_GET_ITEM(tables, K_WALK) == Py_None || PyCallable_Check(PyTuple_GET_ITEM(tables, K_WALK)))
        || !PyDict_Check(PyTuple_GET_ITEM(tables, K_NAMES)) || !PyDict_Check(PyTuple_GET_ITEM(tables, K_VALUES))
        || !PyIter_Check(PyTuple_GET_ITEM(tables, K_NEXT)) || !PyCallable_Check(PyTuple_GET_ITEM(tables, K_WRITE))
        || !PyTuple_CheckExact(PyTuple_GET_ITEM(tables, K_LIMITS)) || PyTuple_GET_SIZE(PyTuple_GET_ITEM(tables, K_LIMITS)) != L_COUNT) {
        PyErr_SetString(PyExc_TypeError, "histeg: bad value key tables");
        return NULL;
    }
    for (int which = 0; which < L_COUNT; which++) {
        self->limits[which] = PyLong_AsSsize_t(PyTuple_GET_ITEM(PyTuple_GET_ITEM(tables, K_LIMITS), which));
        if (self->limits[which] < 0) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "histeg: bad value key tables");
            }
            return NULL;
        }
    }
    Py_XSETREF(self->keys, Py_NewRef(tables));
    forget_tables(self);  /* its ids and answers were another table's */
    Py_RETURN_NONE;
}

/* keyed_id(value) -> the id keyed_id finds, or None: what the tracer answers without calling into Python. */
static PyObject *
tracer_keyed_id(TracerObject *self, PyObject *value)
{
    unsigned long long id;
    PyObject *key;
    int unsettled = 0;
    int known = keyed_id(self, value, Py_TYPE(value), &id, &key, &unsettled);
    Py_XDECREF(key);
    if (known) {
        return PyLong_FromUnsignedLongLong(id);
    }
    Py_RETURN_NONE;
}

/* id_of(value) -> the id the tracer records for a value, as a call's parameter: in C where it can, else through
 * ValueIds (NO_VALUE: abstracting it failed). */
static PyObject *
tracer_id_of(TracerObject *self, PyObject *value)
{
    TStateObject *st = current_state(self, 1);
    if (st == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "histeg: no thread state");
        }
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(value_id(self, st, value));
}

/* After fork, in the child: forget threads and suspended calls, write through new bindings. */
static PyObject *
tracer_reset(TracerObject *self, PyObject *args)
{
    PyObject *new_thread, *chunk, *by_type, *by_value, *value_id;
    if (!PyArg_ParseTuple(args, "OOOOO", &new_thread, &chunk, &by_type, &by_value, &value_id)) {
        return NULL;
    }
    if (bind(self, new_thread, chunk, by_type, by_value, value_id) < 0) {
        return NULL;
    }
    self->last_state = NULL;
    self->last_tid = 0;
    self->vlen = 0;  /* the parent's values: its own file defines them */
    Py_CLEAR(self->records);
    susp_clear(&self->suspended);
    forget_tables(self);
    PyDict_Clear(self->states_by_tid);
    if (PyList_SetSlice(self->states, 0, PyList_GET_SIZE(self->states), NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
tracer_get_label(TracerObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromUnsignedLong(self->label);
}

static int
tracer_set_label(TracerObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "label cannot be deleted");
        return -1;
    }
    unsigned long label = PyLong_AsUnsignedLong(value);
    if (label == (unsigned long)-1 && PyErr_Occurred()) {
        return -1;
    }
    self->label = (unsigned int)label;
    return 0;
}

static PyObject *
tracer_get_thread_count(TracerObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(PyList_GET_SIZE(self->states));
}

static PyObject *
tracer_get_digested(TracerObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSize_t(self->memo.count);
}

static PyObject *
tracer_get_remembered(TracerObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSize_t(self->objects.count);
}

/* -- type boilerplate ------------------------------------------------------ */

static int
tracer_init(TracerObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"instrument", "new_thread", "chunk", "by_type", "by_value", "value_id", "capture", "budget", "switch_lines",
                             "line_budget", "line_cap", NULL};
    PyObject *instrument_fn, *new_thread, *chunk, *by_type, *by_value, *value_id_fn, *switch_fn;
    int capture;
    unsigned long long budget, line_budget, line_cap = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOpKOK|K", kwlist, &instrument_fn, &new_thread, &chunk, &by_type,
                                     &by_value, &value_id_fn, &capture, &budget, &switch_fn, &line_budget, &line_cap)) {
        return -1;
    }
    if (!PyCallable_Check(instrument_fn) || !PyCallable_Check(switch_fn)) {
        PyErr_SetString(PyExc_TypeError, "histeg: instrument and switch_lines must be callable");
        return -1;
    }
    Py_XSETREF(self->switch_lines, Py_NewRef(switch_fn));
    histeg_gc_counters(&self->gc_young, self->gc_runs);
    self->line_budget = line_budget;
    self->line_cap = line_cap;
    if (bind(self, new_thread, chunk, by_type, by_value, value_id_fn) < 0) {
        return -1;
    }
    PyObject *monitoring = PySys_GetObject("monitoring");  /* borrowed */
    PyObject *disable = monitoring ? PyObject_GetAttrString(monitoring, "DISABLE") : NULL;
    if (disable == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "histeg: sys.monitoring is missing");
        }
        return -1;
    }
    Py_XSETREF(self->disable, disable);
    Py_XSETREF(self->instrument, Py_NewRef(instrument_fn));
    susp_clear(&self->suspended);
    Py_XSETREF(self->states, PyList_New(0));
    Py_XSETREF(self->states_by_tid, PyDict_New());
    if (self->states == NULL || self->states_by_tid == NULL) {
        return -1;
    }
    self->ready = 1;
    if (self->table == NULL) {
        self->tcap = 1024;
        self->table = PyMem_Calloc(self->tcap, sizeof(FuncInfo *));
        if (self->table == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    self->capture = capture;
    self->budget = budget;
    return 0;
}

/* The bindings are bound methods of the collector, which holds this tracer: a cycle for the GC. */
static int
tracer_traverse(TracerObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->instrument);
    Py_VISIT(self->new_thread);
    Py_VISIT(self->chunk);
    Py_VISIT(self->records);
    Py_VISIT(self->by_type);
    Py_VISIT(self->by_value);
    Py_VISIT(self->value_id);
    Py_VISIT(self->keys);
    int visited = type_facts_traverse(&self->facts, visit, arg);
    if (visited || (visited = object_memo_traverse(&self->objects, visit, arg))) {
        return visited;
    }
    Py_VISIT(self->no_key_streaks);
    Py_VISIT(self->switch_lines);
    Py_VISIT(self->states);
    Py_VISIT(self->states_by_tid);
    return 0;
}

static int
tracer_clear(TracerObject *self)
{
    self->last_state = NULL;
    self->last_tid = 0;
    Py_CLEAR(self->instrument);
    Py_CLEAR(self->new_thread);
    Py_CLEAR(self->chunk);
    Py_CLEAR(self->records);
    self->vlen = 0;
    Py_CLEAR(self->by_type);
    Py_CLEAR(self->by_value);
    Py_CLEAR(self->value_id);
    Py_CLEAR(self->keys);
    forget_tables(self);
    Py_CLEAR(self->switch_lines);
    self->ready = 0;
    susp_clear(&self->suspended);
    Py_CLEAR(self->states);
    Py_CLEAR(self->states_by_tid);
    Py_CLEAR(self->disable);
    Py_CLEAR(self->no_key_streaks);
    return 0;
}

static void
tracer_dealloc(TracerObject *self)
{
    PyObject_GC_UnTrack(self);
    tracer_clear(self);
    if (self->table != NULL) {
        for (size_t i = 0; i < self->tcap; i++) {
            if (self->table[i] != NULL) {
                Py_XDECREF(self->table[i]->names);
                Py_XDECREF(self->table[i]->redacted);
                PyMem_Free(self->table[i]);
            }
        }
        PyMem_Free(self->table);
    }
    PyMem_Free(self->lines_off);
    PyMem_Free(self->vbuf);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void
gencall_dealloc(GenCallObject *self)
{
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* -- event hooks -------------------------------------------------------------
 * What sys.monitoring calls for each event: an object of its own that is called through its vectorcall slot. A
 * builtin method would cost each event a recursion check and a thread-state lookup through the dynamic linker
 * (cfunction_vectorcall_FASTCALL: 480 M instructions of a traced run of a lexer's 500 short tests). The callbacks
 * never recurse: a value that calls into Python does so through calls that check the recursion themselves. */

typedef PyObject *(*EventFunc)(TracerObject *, PyObject *const *, Py_ssize_t);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    TracerObject *tracer;
    EventFunc event;
} HookObject;

static PyTypeObject HookType;

static PyObject *
hook_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    HookObject *hook = (HookObject *)callable;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) {
        PyErr_SetString(PyExc_TypeError, "histeg: an event hook takes no keyword arguments");
        return NULL;
    }
    if (hook->tracer == NULL) {  /* cleared by the GC: nothing to record into */
        Py_RETURN_NONE;
    }
    return hook->event(hook->tracer, args, PyVectorcall_NARGS(nargsf));
}

static int
hook_traverse(HookObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->tracer);
    return 0;
}

static int
hook_clear(HookObject *self)
{
    Py_CLEAR(self->tracer);
    return 0;
}

static void
hook_dealloc(HookObject *self)
{
    PyObject_GC_UnTrack(self);
    hook_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The hook of one event (the getter's closure is its function); a new one per read: it holds the tracer. */
static PyObject *
tracer_hook(TracerObject *self, void *event)
{
    HookObject *hook = PyObject_GC_New(HookObject, &HookType);
    if (hook == NULL) {
        return NULL;
    }
    hook->vectorcall = hook_vectorcall;
    hook->tracer = (TracerObject *)Py_NewRef((PyObject *)self);
    hook->event = (EventFunc)event;
    PyObject_GC_Track(hook);
    return (PyObject *)hook;
}

static PyMethodDef tracer_methods[] = {
    {"close_stale", (PyCFunction)tracer_close_stale, METH_NOARGS,
     "Close the calls left on this thread's stack (frames whose end was never reported) and ship its events."},
    {"ship_all", (PyCFunction)tracer_ship_all, METH_NOARGS, "Ship every thread's buffered events."},
    {"reset", (PyCFunction)tracer_reset, METH_VARARGS,
     "reset(new_thread, chunk, by_type, by_value, value_id): after fork (values_to must be called again)."},
    {"values_to", (PyCFunction)tracer_values_to, METH_O, "values_to(records): new values' records go to records(bytes) in batches."},
    {"keyed", (PyCFunction)tracer_keyed, METH_O, "keyed(tables): what keyed values are looked up in (ValueIds.native_tables())."},
    {"keyed_id", (PyCFunction)tracer_keyed_id, METH_O, "keyed_id(value) -> the id the tracer finds for a keyed value itself, or None."},
    {"id_of", (PyCFunction)tracer_id_of, METH_O, "id_of(value) -> the id the tracer records for a value."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tracer_getset[] = {
    {"py_start", (getter)tracer_hook, NULL, "PY_START callback.", (void *)tracer_py_start},
    {"py_return", (getter)tracer_hook, NULL, "PY_RETURN callback.", (void *)tracer_py_return},
    {"py_yield", (getter)tracer_hook, NULL, "PY_YIELD callback.", (void *)tracer_py_yield},
    {"py_unwind", (getter)tracer_hook, NULL, "PY_UNWIND callback.", (void *)tracer_py_unwind},
    {"py_resume", (getter)tracer_hook, NULL, "PY_RESUME and PY_THROW callback.", (void *)tracer_py_resume},
    {"line", (getter)tracer_hook, NULL, "LINE callback.", (void *)tracer_line},
    {"label", (getter)tracer_get_label, (setter)tracer_set_label, "Label id of the entry points that start from now on.", NULL},
    {"thread_count", (getter)tracer_get_thread_count, NULL, "Threads that recorded events.", NULL},
    {"digested", (getter)tracer_get_digested, NULL, "Keyed values whose ids are kept by a digest of their key.", NULL},
    {"remembered", (getter)tracer_get_remembered, NULL, "Objects and tuples whose ids are kept by what their key is made of (the object memo).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* The line coverage tool's LINE callback (``histeg.tracing.coverage``): the line into its file's set, then DISABLE.
 * In C because a Python callback is a place where the interpreter runs a due signal handler: the handler then saw
 * histeg's frame instead of the program's, and what it raised went to the program at another line. Given `offsets`,
 * it is the INSTRUCTION callback of the bodies heard that way (lineset_line_of). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *files;   /* dict: co_filename -> set of line numbers */
    PyObject *disable; /* sys.monitoring.DISABLE */
    PyObject *offsets; /* NULL, or dict: id of a body -> (weak reference to it, starts of its ranges, their lines) */
} LineSetObject;

/* An int array's items (array("i")), or NULL with `view` unset when it is not one. */
static const int *
int_items(PyObject *items, Py_buffer *view, Py_ssize_t *count)
{
    if (PyObject_GetBuffer(items, view, PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return NULL;
    }
    if (view->itemsize != (Py_ssize_t)sizeof(int) || view->format == NULL || strcmp(view->format, "i") != 0) {
        PyBuffer_Release(view);
        return NULL;
    }
    *count = view->len / view->itemsize;
    return (const int *)view->buf;
}

/* The line of an instruction of a body in `offsets`, found by the code object's id (a code object's hash covers all
 * its instructions): (weak reference to the code, where its ranges start, their lines, -1 for none), both
 * array("i"), searched by bisection. 1 and a new reference in *line, 0 when it has none, -1 on error. */
static int
lineset_line_of(LineSetObject *self, PyObject *code, PyObject *offset, PyObject **line)
{
    PyObject *key = PyLong_FromVoidPtr(code);
    if (key == NULL) {
        return -1;
    }
    PyObject *entry = PyDict_GetItemWithError(self->offsets, key);
    Py_DECREF(key);
    if (entry == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3 || !PyWeakref_Check(PyTuple_GET_ITEM(entry, 0))) {
        return 0;
    }
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *alive = NULL;
    if (PyWeakref_GetRef(PyTuple_GET_ITEM(entry, 0), &alive) < 0) {
        return -1;
    }
    Py_XDECREF(alive);  /* only compared */
#else
    PyObject *alive = PyWeakref_GetObject(PyTuple_GET_ITEM(entry, 0));
#endif
    long at = PyLong_AsLong(offset);
    if (at == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (alive != code) {
        return 0;
    }
    Py_buffer starts_view, lines_view;
    Py_ssize_t count = 0, lines_count = 0;
    const int *starts = int_items(PyTuple_GET_ITEM(entry, 1), &starts_view, &count);
    if (starts == NULL) {
        return 0;
    }
    const int *lines = int_items(PyTuple_GET_ITEM(entry, 2), &lines_view, &lines_count);
    if (lines == NULL) {
        PyBuffer_Release(&starts_view);
        return 0;
    }
    Py_ssize_t low = 0, high = count < lines_count ? count : lines_count;  /* the first range starting after `at` */
    while (low < high) {
        Py_ssize_t middle = (low + high) / 2;
        if (starts[middle] <= at) {
            low = middle + 1;
        }
        else {
            high = middle;
        }
    }
    int number = low > 0 ? lines[low - 1] : -1;
    PyBuffer_Release(&lines_view);
    PyBuffer_Release(&starts_view);
    if (number < 0) {
        return 0;
    }
    *line = PyLong_FromLong(number);
    return *line == NULL ? -1 : 1;
}

static PyObject *
lineset_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    LineSetObject *self = (LineSetObject *)callable;
    if (PyVectorcall_NARGS(nargsf) != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) || !PyCode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "histeg: a LINE callback takes (code, line), an INSTRUCTION one (code, offset)");
        return NULL;
    }
    PyObject *line = args[1];
    PyObject *made = NULL;
    if (self->offsets != NULL) {
        int found = lineset_line_of(self, args[0], args[1], &made);
        if (found <= 0) {
            return found < 0 ? NULL : Py_NewRef(self->disable);
        }
        line = made;
    }
    PyObject *file = ((PyCodeObject *)args[0])->co_filename;
    PyObject *lines = PyDict_GetItemWithError(self->files, file);
    if (lines == NULL) {
        if (PyErr_Occurred()) {
            goto error;
        }
        lines = PySet_New(NULL);
        if (lines == NULL) {
            goto error;
        }
        int stored = PyDict_SetItem(self->files, file, lines);
        Py_DECREF(lines);  /* the dict holds it */
        if (stored < 0) {
            goto error;
        }
    }
    if (PySet_Add(lines, line) < 0) {
        goto error;
    }
    Py_XDECREF(made);
    return Py_NewRef(self->disable);
error:
    Py_XDECREF(made);
    return NULL;
}

static PyObject *
lineset_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *files, *disable, *offsets = NULL;
    static char *names[] = {"files", "disable", "offsets", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|O!:LineSet", names, &PyDict_Type, &files, &disable, &PyDict_Type, &offsets)) {
        return NULL;
    }
    LineSetObject *self = (LineSetObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = lineset_vectorcall;
    self->files = Py_NewRef(files);
    self->disable = Py_NewRef(disable);
    self->offsets = Py_XNewRef(offsets);
    return (PyObject *)self;
}

static int
lineset_traverse(LineSetObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->files);
    Py_VISIT(self->disable);
    Py_VISIT(self->offsets);
    return 0;
}

static int
lineset_clear(LineSetObject *self)
{
    Py_CLEAR(self->files);
    Py_CLEAR(self->disable);
    Py_CLEAR(self->offsets);
    return 0;
}

static void
lineset_dealloc(LineSetObject *self)
{
    PyObject_GC_UnTrack(self);
    lineset_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject LineSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.tracing._ctracer.LineSet",
    .tp_doc = "LineSet(files, disable, offsets=None): a LINE callback adding each line to files[code.co_filename] (a set), "
              "returning disable; with offsets, an INSTRUCTION callback adding the line of the range the offset falls in "
              "(offsets[id(code)]: a weak reference to code, the starts of its ranges and their lines, array('i')).",
    .tp_basicsize = sizeof(LineSetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(LineSetObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = lineset_new,
    .tp_traverse = (traverseproc)lineset_traverse,
    .tp_clear = (inquiry)lineset_clear,
    .tp_dealloc = (destructor)lineset_dealloc,
};

static PyTypeObject HookType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.tracing._ctracer.EventHook",
    .tp_basicsize = sizeof(HookObject),
    .tp_dealloc = (destructor)hook_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(HookObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_traverse = (traverseproc)hook_traverse,
    .tp_clear = (inquiry)hook_clear,
};

static PyTypeObject GenCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.tracing._ctracer.GenCall",
    .tp_basicsize = sizeof(GenCallObject),
    .tp_dealloc = (destructor)gencall_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

static PyTypeObject TStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.tracing._ctracer.ThreadState",
    .tp_basicsize = sizeof(TStateObject),
    .tp_dealloc = (destructor)tstate_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

static PyTypeObject TracerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "histeg.tracing._ctracer.Tracer",
    .tp_doc = "Tracer(instrument, new_thread, chunk, by_type, by_value, value_id, capture, budget, switch_lines, line_budget, line_cap=0): the hot callbacks.",
    .tp_basicsize = sizeof(TracerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)tracer_traverse,
    .tp_clear = (inquiry)tracer_clear,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)tracer_init,
    .tp_dealloc = (destructor)tracer_dealloc,
    .tp_methods = tracer_methods,
    .tp_getset = tracer_getset,
};

static int
read_constant(PyObject *format, const char *name, unsigned long long *out)
{
    PyObject *value = PyObject_GetAttrString(format, name);
    if (value == NULL) {
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    return PyErr_Occurred() ? -1 : 0;
}

/* untracked(key): the key with it and the tuples it holds left out of the garbage collector's generations. A value
 * table keeps a key per distinct value (a hundred thousand on a parser's suite): tracked, every collection of the
 * traced program, and the full ones a test runner asks for, would visit them all. A key is a tuple of types, texts,
 * numbers and keys: it can be part of no cycle, and what it holds stays alive through its references. */
static void
untrack_tuples(PyObject *value, int depth)
{
    if (!PyTuple_CheckExact(value) || depth > 8) {
        return;
    }
    if (PyObject_GC_IsTracked(value)) {
        PyObject_GC_UnTrack(value);
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); i++) {
        untrack_tuples(PyTuple_GET_ITEM(value, i), depth + 1);
    }
}

static PyObject *
module_untracked(PyObject *Py_UNUSED(module), PyObject *key)
{
    untrack_tuples(key, 0);
    return Py_NewRef(key);
}

/* cap(text, limit) -> what the tracer records for a text of the walk (values.cap with MAX_REPR as limit). */
static PyObject *
module_cap(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "Un", &text, &limit)) {
        return NULL;
    }
    return capped(text, limit);
}


/* -- files read (histeg.tracing.seen_files) ---------------------------------------------------------------------
 * An audit hook in C: a Python hook is a frame like any other, so an audited operation (open, sys._getframe) near the
 * recursion limit would raise there under tracing and not without. This one checks no recursion, calls no Python and
 * never fails the operation: a path is kept as given, with the working folder it is relative to, for Python to read
 * after the run; what cannot be kept makes the run blind. */

typedef struct {
    int on, hooked;
    PyObject *opened, *listed, *others, *blind, *children; /* set, set, list, set, list */
} FileEars;

static FileEars EARS;

static const char *const SPAWNING_EVENTS[] = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.startfile", "os.fork",
                                              "os.forkpty", NULL};
static const char *const BLINDING_EVENTS[][2] = {{"os.exec", "replaced itself with another program"},
                                                 {"ctypes.dlopen", "loaded a library through ctypes"}, {NULL, NULL}};

static void
ears_blind(const char *why)
{
    PyObject *text = PyUnicode_FromString(why);
    if (text == NULL || PySet_Add(EARS.blind, text) < 0) {
        PyErr_Clear();
    }
    Py_XDECREF(text);
}

static void
ears_keep(PyObject *into, PyObject *path)
{
    PyObject *entry = NULL, *cwd = NULL;
    int relative = 1;
    if (PyUnicode_Check(path) && PyUnicode_GET_LENGTH(path) > 0) {
        relative = PyUnicode_READ_CHAR(path, 0) != '/';
    }
    else if (PyBytes_Check(path) && PyBytes_GET_SIZE(path) > 0) {
        relative = PyBytes_AS_STRING(path)[0] != '/';
    }
    if (relative) {
        char buf[4096];
        if (getcwd(buf, sizeof buf) == NULL) {
            ears_blind("a path relative to a working folder histeg could not read");
            return;
        }
        cwd = PyUnicode_DecodeFSDefault(buf);
    }
    else {
        cwd = Py_NewRef(Py_None);
    }
    if (cwd != NULL) {
        entry = PyTuple_Pack(2, cwd, path);
    }
    int exact = PyUnicode_CheckExact(path) || PyBytes_CheckExact(path);
    /* a set hashes exact strings in C; any other object is listed, never hashed (its __hash__ may be Python) */
    if (entry == NULL || (exact ? PySet_Add(into, entry) : PyList_Append(EARS.others, entry)) < 0) {
        PyErr_Clear();
        ears_blind("a file name histeg could not keep");
    }
    Py_XDECREF(entry);
    Py_XDECREF(cwd);
}

static int
ears_hook(const char *event, PyObject *args, void *data)
{
    (void)data;
    if (!EARS.on || (event[0] != 'o' && event[0] != 's' && event[0] != 'c')) {
        return 0;
    }
    PyObject *exc = PyErr_GetRaisedException();  /* never clobber, never leave one set */
    int listing = strcmp(event, "os.listdir") == 0 || strcmp(event, "os.scandir") == 0;
    if (strcmp(event, "open") == 0 || listing) {
        PyObject *path = PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0) : Py_None;
        if (path == Py_None && listing) {
            PyObject *here = PyUnicode_FromString(".");
            if (here != NULL) {
                ears_keep(EARS.listed, here);
                Py_DECREF(here);
            }
            else {
                PyErr_Clear();
            }
        }
        else if (path != Py_None && !PyLong_Check(path)) {  /* a file descriptor names a file opened before */
            ears_keep(listing ? EARS.listed : EARS.opened, path);
        }
    }
    else {
        for (int i = 0; SPAWNING_EVENTS[i] != NULL; i++) {
            if (strcmp(event, SPAWNING_EVENTS[i]) == 0) {
                /* with its arguments: subprocess.Popen hears a child once, and os.posix_spawn once more when Popen spawns with it */
                PyObject *name = PyUnicode_FromString(event), *entry = name != NULL ? PyTuple_Pack(2, name, args) : NULL;
                if (entry == NULL || PyList_Append(EARS.children, entry) < 0) {
                    PyErr_Clear();
                    ears_blind("started a process histeg could not count");
                }
                Py_XDECREF(entry);
                Py_XDECREF(name);
            }
        }
        for (int i = 0; BLINDING_EVENTS[i][0] != NULL; i++) {
            if (strcmp(event, BLINDING_EVENTS[i][0]) == 0) {
                ears_blind(BLINDING_EVENTS[i][1]);
            }
        }
    }
    PyErr_SetRaisedException(exc);
    return 0;
}

/* hear_files(opened: set, listed: set, others: list, blind: set, children: list) starts recording into them (the hook is
 * added once per process); hear_files() stops. */
static PyObject *
module_hear_files(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *opened = NULL, *listed = NULL, *others = NULL, *blind = NULL, *children = NULL;
    if (!PyArg_ParseTuple(args, "|O!O!O!O!O!", &PySet_Type, &opened, &PySet_Type, &listed, &PyList_Type, &others, &PySet_Type, &blind,
                          &PyList_Type, &children)) {
        return NULL;
    }
    if (opened == NULL) {
        EARS.on = 0;
        Py_RETURN_NONE;
    }
    if (listed == NULL || others == NULL || blind == NULL || children == NULL) {
        PyErr_SetString(PyExc_TypeError, "hear_files takes no argument or five");
        return NULL;
    }
    EARS.on = 0;
    Py_XSETREF(EARS.opened, Py_NewRef(opened));
    Py_XSETREF(EARS.listed, Py_NewRef(listed));
    Py_XSETREF(EARS.others, Py_NewRef(others));
    Py_XSETREF(EARS.blind, Py_NewRef(blind));
    Py_XSETREF(EARS.children, Py_NewRef(children));
    if (!EARS.hooked) {
        if (PySys_AddAuditHook(ears_hook, NULL) < 0) {
            return NULL;
        }
        EARS.hooked = 1;
    }
    EARS.on = 1;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"cap", module_cap, METH_VARARGS, "cap(text, limit) -> a text longer than limit as a prefix, its length and a digest."},
    {"untracked", module_untracked, METH_O, "untracked(key) -> key: its tuples left out of the garbage collector's generations."},
    {"hear_files", module_hear_files, METH_VARARGS, "hear_files(opened, listed, others, blind, children): the files read, heard (none: stop)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef ctracer_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "histeg.tracing._ctracer",
    .m_doc = "sys.monitoring callbacks of histeg's collector, in C.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__ctracer(void)
{
    PyObject *format = PyImport_ImportModule("histeg.tracing.format");
    if (format == NULL) {
        return NULL;
    }
    unsigned long long op_call, call_root, call_gen, call_bare, op_return, op_return_bare, op_raise, op_yield, op_resume, op_lines_off,
        op_lines_on, chunk_words;
    int failed = read_constant(format, "OP_CALL", &op_call) < 0 || read_constant(format, "CALL_ROOT", &call_root) < 0
        || read_constant(format, "CALL_GEN", &call_gen) < 0 || read_constant(format, "CALL_BARE", &call_bare) < 0
        || read_constant(format, "OP_RETURN", &op_return) < 0 || read_constant(format, "OP_RETURN_BARE", &op_return_bare) < 0
        || read_constant(format, "OP_RAISE", &op_raise) < 0 || read_constant(format, "OP_YIELD", &op_yield) < 0
        || read_constant(format, "OP_RESUME", &op_resume) < 0 || read_constant(format, "INLINE_INT", &INLINE_INT) < 0
        || read_constant(format, "OP_LINES_OFF", &op_lines_off) < 0 || read_constant(format, "OP_LINES_ON", &op_lines_on) < 0
        || read_constant(format, "INT_BIAS", &INT_BIAS) < 0 || read_constant(format, "CHUNK_WORDS", &chunk_words) < 0
        || read_constant(format, "REC_VALUE", &REC_VALUE) < 0;
    Py_DECREF(format);
    if (failed) {
        return NULL;
    }
    PyObject *zlib = PyImport_ImportModule("zlib");
    if (zlib == NULL) {
        return NULL;
    }
    CRC32 = PyObject_GetAttrString(zlib, "crc32");
    ADLER32 = CRC32 != NULL ? PyObject_GetAttrString(zlib, "adler32") : NULL;
    Py_DECREF(zlib);
    if (ADLER32 == NULL) {
        return NULL;
    }
    CHUNK_WORDS = (Py_ssize_t)chunk_words;
    OP_CALL = (unsigned int)op_call;
    CALL_ROOT = (unsigned int)call_root;
    CALL_GEN = (unsigned int)call_gen;
    CALL_BARE = (unsigned int)call_bare;
    OP_RETURN = (unsigned int)op_return;
    OP_RETURN_BARE = (unsigned int)op_return_bare;
    OP_RAISE = (unsigned int)op_raise;
    OP_YIELD = (unsigned int)op_yield;
    OP_RESUME = (unsigned int)op_resume;
    OP_LINES_OFF = (unsigned int)op_lines_off;
    OP_LINES_ON = (unsigned int)op_lines_on;
    if (PyType_Ready(&HookType) < 0 || PyType_Ready(&GenCallType) < 0 || PyType_Ready(&TStateType) < 0 || PyType_Ready(&TracerType) < 0
        || PyType_Ready(&LineSetType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&ctracer_module);
    if (module == NULL) {
        return NULL;
    }
    sigfillset(&HELD_SIGNALS);
    int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};  /* raised by the call itself: never held */
    for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
        sigdelset(&HELD_SIGNALS, faults[i]);
    }
    if (PyModule_AddObjectRef(module, "Tracer", (PyObject *)&TracerType) < 0
        || PyModule_AddObjectRef(module, "LineSet", (PyObject *)&LineSetType) < 0
        || PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0
        || PyModule_AddIntConstant(module, "SEES_INTERNALS", histeg_internals_seen()) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
