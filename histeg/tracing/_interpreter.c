/* The interpreter's objects read as the program left them, and what only its internal headers declare.
 *
 * - Whether a signal's Python handler is due: the C handler has run, the program's next check has not (the
 *   collector's calls into Python must not run it: see "signals" in _ctracer.c).
 * - An instance's attributes while the interpreter still keeps them as inline values, without making its
 *   __dict__: reading __dict__ makes one, and on 3.12 the program's attribute reads of that object are then about
 *   four times slower (1.5 times on 3.13), for the rest of its life. Recording a value must not change how fast
 *   the program runs.
 * - A slot's value, read from its member as the slot's getter reads it, without calling the getter (a call through
 *   a method wrapper builds an argument tuple: most of the cost of a key of an object with slots).
 * - A parameter of the running call, read from its frame's locals as PyFrame_GetVar reads it, without making the
 *   frame's Python object: PyEval_GetFrame makes one per call (an allocation for the collector to track, and a
 *   heavier exit for the frame), which on a parser's suite was a tenth of what recording a call's values cost.
 * - The collector's schedule: the count of container objects allocated since the last collection, which decides
 *   when the program's next collection runs. What the collector allocates and keeps (value tables, keys, the Python
 *   walk's objects) is taken back off that count when a callback ends, so the program is collected when it would be
 *   untraced: on a parser's suite the collector's allocations had added 163 young collections to the program's 260
 *   and a full one to its 4, and their traversal of the program's objects was about a seventh of what tracing added.
 *
 * Compiled with those headers, and only where they are installed: elsewhere histeg_internals_seen says 0,
 * histeg_signal_due answers 0 (the collector then holds signals during its calls into Python but cannot tell a
 * handler already due before one) and histeg_inline_attributes -1 (__dict__ is read). The layouts read here are
 * those of 3.12 and 3.13 with the GIL; any other build reads __dict__. */

#define PY_SSIZE_T_CLEAN
#include <patchlevel.h>
#include <pyconfig.h>
#if defined(__has_include) && PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#  if __has_include(<internal/pycore_runtime.h>) && __has_include(<internal/pycore_dict.h>)
#    define HISTEG_INTERNALS 1
#    define Py_BUILD_CORE 1
#  endif
#endif
#include <Python.h>
#include <stdint.h>
#include <structmember.h>
#include "_interpreter.h"
#ifdef HISTEG_INTERNALS
#  include <internal/pycore_runtime.h>
#  include <internal/pycore_pystate.h>
#  include <internal/pycore_object.h>
#  include <internal/pycore_dict.h>
#  include <internal/pycore_code.h>
#  include <internal/pycore_frame.h>
#endif

int
histeg_internals_seen(void)
{
#ifdef HISTEG_INTERNALS
    return 1;
#else
    return 0;
#endif
}

/* Whether a signal's handler is due in this thread: only the main thread of the main interpreter runs handlers, so for
 * any other a tripped signal is the main thread's to handle, and nothing is due here. */
int
histeg_signal_due(void)
{
#ifndef HISTEG_INTERNALS
    return 0;
#else
#  if PY_VERSION_HEX >= 0x030D0000
    int tripped = _Py_atomic_load_int(&_PyRuntime.signals.is_tripped);
#  else
    int tripped = _Py_atomic_load_relaxed(&_PyRuntime.signals.is_tripped);
#  endif
    return tripped && _Py_ThreadCanHandleSignals(PyInterpreterState_Get());
#endif
}

/* The attributes `obj` keeps as inline values, in the order its __dict__ would list them (borrowed references):
 * their count, at most `max`; -1 when it has none of this kind (its __dict__ was made, its type keeps no inline
 * values, more than `max`), and __dict__ is then to be read (it makes nothing new when it exists). */
Py_ssize_t
histeg_inline_attributes(PyObject *obj, PyObject **names, PyObject **values, Py_ssize_t max)
{
#ifndef HISTEG_INTERNALS
    (void)obj, (void)names, (void)values, (void)max;
    return -1;
#else
    PyTypeObject *tp = Py_TYPE(obj);
    if (!(tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) || !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        return -1;
    }
    PyDictKeysObject *keys = ((PyHeapTypeObject *)tp)->ht_cached_keys;
    if (keys == NULL || keys->dk_kind == DICT_KEYS_GENERAL) {
        return -1;
    }
#  if PY_VERSION_HEX >= 0x030D0000
    if (!(tp->tp_flags & Py_TPFLAGS_INLINE_VALUES) || _PyObject_GetManagedDict(obj) != NULL) {
        return -1;
    }
    PyDictValues *inline_values = _PyObject_InlineValues(obj);
    if (!inline_values->valid) {
        return -1;
    }
    Py_ssize_t size = inline_values->size, capacity = inline_values->capacity;
    const uint8_t *order = get_insertion_order_array(inline_values);
#  else
    PyDictOrValues dorv = *_PyObject_DictOrValuesPointer(obj);
    if (!_PyDictOrValues_IsValues(dorv)) {
        return -1;
    }
    PyDictValues *inline_values = _PyDictOrValues_GetValues(dorv);
    const uint8_t *prefix = (const uint8_t *)inline_values;  /* [-1] prefix size, [-2] used, [-3 - k] the k-th inserted */
    Py_ssize_t size = prefix[-2], capacity = (Py_ssize_t)prefix[-1] - 2;  /* the order's room is the prefix's */
#  endif
    if (size > max || size > capacity) {
        return -1;
    }
    PyDictUnicodeEntry *entries = DK_UNICODE_ENTRIES(keys);
    for (Py_ssize_t k = 0; k < size; k++) {
#  if PY_VERSION_HEX >= 0x030D0000
        Py_ssize_t index = order[k];
#  else
        Py_ssize_t index = prefix[-3 - k];
#  endif
        if (index >= keys->dk_nentries) {
            return -1;
        }
        names[k] = entries[index].me_key;
        values[k] = inline_values->values[index];
        if (names[k] == NULL || values[k] == NULL) {
            return -1;
        }
    }
    return size;
#endif
}

/* The instance dict of `obj` (borrowed) where it exists already; NULL where it does not, or where finding it could make
 * it (a managed dict whose attributes are still inline values, or no internals to read it with). */
PyObject *
histeg_existing_dict(PyObject *obj)
{
#ifndef HISTEG_INTERNALS
    (void)obj;
    return NULL;
#else
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) {
#  if PY_VERSION_HEX >= 0x030D0000
        return (PyObject *)_PyObject_GetManagedDict(obj);
#  else
        PyDictOrValues dorv = *_PyObject_DictOrValuesPointer(obj);
        return _PyDictOrValues_IsValues(dorv) ? NULL : dorv.dict;
#  endif
    }
    if (tp->tp_dictoffset <= 0) {  /* none, or one counted from a variable size: not read here */
        return NULL;
    }
    return *(PyObject **)((char *)obj + tp->tp_dictoffset);
#endif
}

/* Where the collector's schedule is read: the young generation's count and the number of collections run so far, or
 * NULLs without internals (gc_settle then does nothing). */
void
histeg_gc_counters(int **young, Py_ssize_t **runs)
{
#ifndef HISTEG_INTERNALS
    *young = NULL;
    runs[0] = runs[1] = runs[2] = NULL;
#else
    struct _gc_runtime_state *gc = &PyInterpreterState_Get()->gc;
    *young = &gc->generations[0].count;
    for (int k = 0; k < 3; k++) {
        runs[k] = &gc->generation_stats[k].collections;
    }
#endif
}

/* The value of the slot `slot` ((name, getter, member descriptor), as Abstraction._layout makes it) of `value`: read
 * from the member as its getter reads it when the descriptor is a plain member of a type `value` is an instance of
 * (and no audit hook is to hear of the read), else by calling the getter. A new reference; NULL and no error set for
 * an unset member read so; else NULL with the error the getter raises (an unset slot: AttributeError). */
PyObject *
histeg_slot_value(PyObject *slot, PyObject *value)
{
    PyObject *member = PyTuple_GET_SIZE(slot) > 2 ? PyTuple_GET_ITEM(slot, 2) : NULL;
    if (member != NULL && Py_IS_TYPE(member, &PyMemberDescr_Type) && PyObject_TypeCheck(value, PyDescr_TYPE(member))) {
        PyMemberDef *definition = ((PyMemberDescrObject *)member)->d_member;
        if (!(definition->flags & (Py_AUDIT_READ | Py_RELATIVE_OFFSET))) {
            if (definition->type == Py_T_OBJECT_EX) {  /* a __slots__ member: PyMember_GetOne's own read */
                PyObject *found = *(PyObject **)((char *)value + definition->offset);
                return found != NULL ? Py_NewRef(found) : NULL;  /* unset: no AttributeError formatted to be cleared */
            }
            return PyMember_GetOne((const char *)value, definition);
        }
    }
    return PyObject_CallOneArg(PyTuple_GET_ITEM(slot, 1), value);
}

/* The value of parameter number `index` of the running call, whose code object must be `code` (a function's first
 * locals are its parameters, in order), read as PyFrame_GetVar reads it once the frame's cells are made, as they are by
 * the time its PY_START event runs. A new reference, *read 1; NULL and *read 1 when the local has no value; NULL and
 * *read 0 when it is not read here (no internals, or the running frame is not `code`'s): PyFrame_GetVar then must. */
PyObject *
histeg_frame_parameter(PyObject *code, Py_ssize_t index, int *read)
{
    *read = 0;
#ifndef HISTEG_INTERNALS
    (void)code, (void)index;
    return NULL;
#else
    PyThreadState *tstate = PyThreadState_GET();
#  if PY_VERSION_HEX >= 0x030D0000
    _PyInterpreterFrame *frame = tstate->current_frame;
    if (frame == NULL || frame->f_executable != code) {
        return NULL;
    }
#  else
    _PyInterpreterFrame *frame = tstate->cframe->current_frame;
    if (frame == NULL || (PyObject *)frame->f_code != code) {
        return NULL;
    }
#  endif
    PyCodeObject *co = (PyCodeObject *)code;
    if (index < 0 || index >= co->co_nlocalsplus) {
        return NULL;
    }
    *read = 1;
    PyObject *value = frame->localsplus[index];
    if (value != NULL && (_PyLocals_GetKind(co->co_localspluskinds, (int)index) & CO_FAST_CELL) && PyCell_Check(value)) {
        value = PyCell_GET(value);  /* MAKE_CELL ran before RESUME, where PY_START is heard */
    }
    return Py_XNewRef(value);
#endif
}
