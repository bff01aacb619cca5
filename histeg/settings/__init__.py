"""Settings: one table of options, typed values built from defaults, a file and flags, each with its origin.

``table`` lists every option once; the command line's flags are generated from
it (``flags``), files and flags are read through it (``load``) into one frozen
``Settings`` (``model``), checked before any work starts.
"""
