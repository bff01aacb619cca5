"""Rule 1 for signals: every exception a signal's handler raises reaches the program, where it would untraced.

A timer's handler raises, as a signal-based timeout does, while the program makes values the C collector abstracts
in Python (objects with float fields have no key). Untraced, every raise reaches the test's ``except``. A handler
run inside histeg's own Python code, in a callback, raised into histeg: where a value is abstracted the exception
was taken for histeg's failure and cleared, and the test saw fewer than were raised (8 to 14 of 300 lost per run
before the collector held signals). The Python collector, used where the C one cannot be built, runs its
callbacks as Python code, where the interpreter itself runs a due handler: it is not held to this.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from histeg.traces.reader import TraceFile, trace_files
from histeg.tracing import _ctracer
from histeg.tracing.activation import traced_environment
from tests.tracing.conftest import base_environment, project_config, write_project

TEST = '''
    import signal

    from work import churn


    class Tick({base}):
        pass


    def test_every_raise_of_the_handler_reaches_the_test():
        raised = caught = 0

        def handler(signum, frame):
            nonlocal raised
            if frame.f_code.co_filename.endswith("test_ticks.py"):
                return  # between two calls: this loop has no except around it
            raised += 1
            raise Tick()

        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
        try:
            for _ in range(300):
                try:
                    churn(1000)
                except Tick:
                    caught += 1
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
        print(f"raised {{raised}} caught {{caught}}")
        assert raised > 50, raised
        assert caught == raised
    '''

WORK = '''
    class Measured:
        def __init__(self, ratio, items):
            self.ratio = ratio
            self.items = items


    def take(value):
        return value


    def churn(n):
        total = 0
        for i in range(n):
            total += take(Measured(i * 0.5, [i * 1.5, {"k": i * 0.25}])) is not None
        return total
    '''


def run_ticks(project: Path, base: str, traced: bool) -> subprocess.CompletedProcess:
    write_project(project, {"src/work.py": WORK, "tests/test_ticks.py": TEST.format(base=base)})
    env = base_environment(project)
    if traced:
        env = traced_environment(project_config(project, tracer="c"), env)
    command = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "tests"]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("base", ["BaseException", "TimeoutError"])
def test_a_signal_handlers_exception_reaches_the_program_under_the_c_collector(base: str, tmp_path: Path) -> None:
    assert _ctracer.SEES_INTERNALS, "the C collector was built without the interpreter's internal headers"
    untraced = run_ticks(tmp_path / "untraced", base, traced=False)
    assert untraced.returncode == 0, untraced.stdout + untraced.stderr
    for attempt in range(2):  # each run raises about 300 times, at random places
        run = run_ticks(tmp_path / f"traced-{attempt}", base, traced=True)
        assert run.returncode == 0, run.stdout + run.stderr
        files = trace_files(tmp_path / f"traced-{attempt}" / "traces")
        assert files and all(TraceFile(path).status == "complete" for path in files), "the run was traced to the end"


THREADED = """
    import signal
    import threading
    import time


    def test_a_thread_runs_new_code_while_the_main_thread_has_a_signal_to_handle():
        handled = []
        signal.signal(signal.SIGALRM, lambda signum, frame: handled.append(signum))
        done = []

        def work():
            for index in range(400):  # a new code object each time: the collector asks Python about each
                namespace = {}
                exec(f"def step_{index}(x):\\n    return x + {index}", namespace)
                done.append(namespace[f"step_{index}"](index))

        signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
        try:
            worker = threading.Thread(target=work)
            worker.start()
            worker.join(timeout=30)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
        assert not worker.is_alive()
        assert len(done) == 400 and handled
    """


def test_a_thread_never_waits_for_a_signal_only_the_main_thread_can_handle(tmp_path: Path) -> None:
    """Only the main thread runs a signal's handler. A collector in another thread that waited for a due handler to
    run before its call into Python would wait with the GIL held, and the main thread could never run it: a hang."""
    project = tmp_path / "threaded"
    write_project(project, {"src/steps.py": "", "tests/test_threaded.py": THREADED})
    config = project_config(project, tracer="c")
    env = traced_environment(config, base_environment(project))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    run = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
