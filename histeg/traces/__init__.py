"""Reading and sealing traces, in histeg's own process: the counterpart of ``histeg.tracing``, the collector that runs
inside the traced program and writes them. Apart so that the collector stays on the standard library and small."""
