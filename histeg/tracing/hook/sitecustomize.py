"""histeg's start-up hook: traces this process when HISTEG_TRACE_CONFIG names a config.

Python imports the first ``sitecustomize`` on the path; this one starts
tracing, then hands over to the user's own ``sitecustomize`` (the next one on
the path), if any. In a zygote (HISTEG_ZYGOTE) it first serves re-runs, and
goes on only in each run it forks (``histeg_zygote``).
"""


def _histeg_zygote() -> None:
    import os

    if os.environ.get("HISTEG_ZYGOTE"):
        from histeg_zygote import serve  # type: ignore[import-not-found]  # beside this file, on PYTHONPATH

        serve()


def _histeg_start() -> None:
    import os
    import sys

    if os.environ.get("HISTEG_TRACE_CONFIG"):
        try:
            from histeg.tracing.session import begin_from_environment
        except ImportError as exc:
            sys.stderr.write(f"histeg: tracing disabled: {exc}\n")
        else:
            begin_from_environment()


def _chain_to_next_sitecustomize() -> None:
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    path = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_histeg_zygote()
_histeg_start()
_chain_to_next_sitecustomize()
