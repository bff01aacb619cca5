"""The optional C collector: when it cannot be compiled, histeg traces with the Python one."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("histeg.tracing._ctracer", ["histeg/tracing/_ctracer.c", "histeg/tracing/_interpreter.c", "histeg/tracing/_keymemo.c", "histeg/tracing/_objectmemo.c", "histeg/tracing/_typefacts.c"], depends=["histeg/tracing/_grow.h", "histeg/tracing/_interpreter.h", "histeg/tracing/_keymemo.h", "histeg/tracing/_mum.h", "histeg/tracing/_objectmemo.h", "histeg/tracing/_typefacts.h", "histeg/tracing/_opentable.h"], optional=True),
    Extension("histeg.tracing._walk", ["histeg/tracing/_walk.c", "histeg/tracing/_interpreter.c", "histeg/tracing/_textmemo.c"], depends=["histeg/tracing/_grow.h", "histeg/tracing/_interpreter.h", "histeg/tracing/_textmemo.h"], optional=True),
    Extension("histeg.traces._decode", ["histeg/traces/_decode.c"], depends=["histeg/tracing/_mum.h"], optional=True),
])
