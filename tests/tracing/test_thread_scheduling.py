"""Rule 1 for threads: the tracer never hands the GIL to another thread where the untraced program would not.

Writing a batch of the trace (zlib, ``os.write``) and waiting for a lock release the GIL; with a program's thread
waiting, it would run there, at a point of the program it could not reach untraced, and a race of the program
could show under tracing only (seen on a real suite: a cache pruned by two threads at once). With the switch
interval out of the way, the only way the other thread of this test runs is a release of the GIL by the thread
that computes: untraced it never runs, and traced it must not either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PROJECT = {
    "src/work.py": '''
        def step(n, label):
            return (n * 2 + 1, label)


        def run(count):
            total = 0
            for i in range(count):
                total += step(i, f"item {i}")[0]
            return total
        ''',
    "tests/test_work.py": '''
        import sys
        import threading
        import time

        from work import run


        def test_no_other_thread_runs_while_this_one_computes():
            sys.setswitchinterval(1000.0)  # no switch by time: only a release of the GIL lets the other thread run
            turns = []
            stop = threading.Event()

            def other():
                while not stop.is_set():
                    turns.append(1)
                    time.sleep(0)  # hands the GIL straight back

            thread = threading.Thread(target=other, daemon=True)
            thread.start()
            time.sleep(0.05)
            before = len(turns)
            assert run(60_000) == 60_000 ** 2
            during = len(turns) - before
            stop.set()
            thread.join()
            assert during == 0, f"the other thread ran {during} times"
        ''',
}


def test_the_tracer_hands_no_thread_a_turn_the_untraced_run_would_not(traced: Any, project_runner: Any, tmp_path: Path) -> None:
    untraced = project_runner(tmp_path / "untraced", PROJECT, trace=False)
    assert untraced.proc.returncode == 0, untraced.proc.stdout + untraced.proc.stderr
    run = traced(PROJECT)
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    # traced while the other thread waited: 60,000 calls, about 1 MB of event words, many batches of the trace
    assert len(run.calls("work:step")) == 60_000
