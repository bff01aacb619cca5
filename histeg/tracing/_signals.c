/* Whether a signal's Python handler is due: the C handler has run, the program's next check has not.
 *
 * Its own file because it reads the interpreter's runtime state, which only the interpreter's internal headers
 * declare: compiled with them, and only where they are installed (histeg_signals_seen then says 0, and
 * histeg_signal_due answers 0: the collector then holds signals during its calls into Python but cannot tell a
 * handler already due before one). */

#define PY_SSIZE_T_CLEAN
#if defined(__has_include)
#  if __has_include(<internal/pycore_runtime.h>)
#    define HISTEG_SEES_SIGNALS 1
#    define Py_BUILD_CORE 1
#  endif
#endif
#include <Python.h>
#ifdef HISTEG_SEES_SIGNALS
#  include <internal/pycore_runtime.h>
#endif

int
histeg_signals_seen(void)
{
#ifdef HISTEG_SEES_SIGNALS
    return 1;
#else
    return 0;
#endif
}

int
histeg_signal_due(void)
{
#ifndef HISTEG_SEES_SIGNALS
    return 0;
#elif PY_VERSION_HEX >= 0x030D0000
    return _Py_atomic_load_int(&_PyRuntime.signals.is_tripped);
#else
    return _Py_atomic_load_relaxed(&_PyRuntime.signals.is_tripped);
#endif
}
