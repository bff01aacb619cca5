/* _interpreter.c: the interpreter's objects read as the program left them (see there). */
#ifndef HISTEG_INTERPRETER_H
#define HISTEG_INTERPRETER_H

#include <Python.h>

int histeg_internals_seen(void);
int histeg_signal_due(void);
Py_ssize_t histeg_inline_attributes(PyObject *obj, PyObject **names, PyObject **values, Py_ssize_t max);
PyObject *histeg_existing_dict(PyObject *obj);
PyObject *histeg_slot_value(PyObject *slot, PyObject *value);
PyObject *histeg_frame_parameter(PyObject *code, Py_ssize_t index, int *read);
void histeg_gc_counters(int **young, Py_ssize_t **runs);

#endif
