"""Traced processes never outlive histeg, their output never fills the disk, and an interrupted run loses nothing.

Every test here starts real processes and sends real signals: histeg's command line (SIGINT, SIGTERM,
SIGKILL while a traced test sleeps), a re-trace interrupted half-way, orphaned process groups, a suite
that prints 200 MB.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from histeg.processes import interrupt
from histeg.processes.groups import end_orphans, group_exists, record, records_folder, start_time
from histeg.processes.process import HEAD_BYTES, TAIL_BYTES, run_process
from histeg.records.runs import Runs
from histeg.runs.runner import RUNS, run_traces
from tests.conftest import INTERRUPTIBLE, GitRepo, interruptible_histeg
from tests.statics.versions import make_version

LIB = "def double(x):\n    return x + x\n"
TEST = "from lib import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
WAITING_TEST = """
import os
import subprocess
import time
from pathlib import Path


def test_waits():
    helper = subprocess.Popen(["sleep", "300"])
    marker = Path({marker!r})
    marker.with_suffix(".tmp").write_text(f"{{os.getpgid(0)}} {{helper.pid}}")
    os.replace(marker.with_suffix(".tmp"), marker)
    time.sleep(300)
"""
PASSING = {"src/calc/__init__.py": "", "tests/test_calc.py": "def test_one():\n    assert 1 + 1 == 2\n"}


def waiting_project(repo: GitRepo, marker: Path) -> None:
    repo.commit("library", {"lib.py": LIB, "tests/test_lib.py": TEST, "tests/test_wait.py": WAITING_TEST.format(marker=str(marker))})


def start_histeg(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(interruptible_histeg(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(marker: Path, process: subprocess.Popen[str] | None = None, seconds: float = 240) -> tuple[int, int]:
    """The traced test's process group and its helper process, once the test runs."""
    deadline = time.monotonic() + seconds
    while not marker.exists():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"histeg ended before the traced test ran: {process.communicate()}")
        assert time.monotonic() < deadline, "the traced test never started"
        time.sleep(0.1)
    pgid, helper = marker.read_text().split()
    return int(pgid), int(helper)


@contextlib.contextmanager
def cleanup(histeg: subprocess.Popen[str]) -> Iterator[list[int]]:
    """What a test that fails inside leaves running is killed: histeg and the process groups the test names.
    Only then: what the test checks afterwards is what histeg did."""
    groups: list[int] = []
    try:
        yield groups
    except BaseException:
        if histeg.poll() is None:
            histeg.kill()
            histeg.communicate()
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
        raise


def gone(pgid: int, seconds: float = 10) -> bool:
    """The group has no live process left (orphans are reaped by init, which may take a moment)."""
    deadline = time.monotonic() + seconds
    while group_exists(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def leftovers(version_dir: Path) -> list[str]:
    return sorted(path.name for path in version_dir.iterdir() if path.name.startswith((".run", ".traces-")))


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code", "message"), [(signal.SIGTERM, 143, "histeg: terminated"), (signal.SIGINT, 130, "histeg: interrupted")],
                         ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_histeg_and_every_traced_process(make_repo, tmp_path: Path, signum: int, code: int, message: str) -> None:
    repo, marker, out = make_repo(), tmp_path / "running", tmp_path / "out"
    waiting_project(repo, marker)
    histeg = start_histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--timeout", "600")
    with cleanup(histeg) as groups:
        pgid, helper = wait_for(marker, histeg)
        groups.append(pgid)
        assert records_folder(out).joinpath(f"{pgid}.json").is_file(), "a running group is recorded"
        histeg.send_signal(signum)
        _, stderr = histeg.communicate(timeout=60)
    assert histeg.returncode == code, stderr
    assert stderr.strip().splitlines()[-1] == message
    assert gone(pgid), "the traced process group was killed"
    assert not alive(helper), "what the test started went with it"
    assert leftovers(out / "0") == [] and list(records_folder(out).iterdir()) == []
    steps = json.loads((out / "0" / "steps.json").read_text())["steps"]
    assert steps["traces"]["status"] == "failed", "an interrupted step is recorded as failed, never taken as good"
    assert not (out / "0" / RUNS).exists() and not (out / "0" / "traces").exists()


@pytest.mark.slow
def test_a_group_left_by_a_killed_histeg_is_ended_at_the_start_of_the_next_run(make_repo, histeg, tmp_path: Path) -> None:
    repo, marker, out = make_repo(), tmp_path / "running", tmp_path / "out"
    waiting_project(repo, marker)
    killed = start_histeg("analyze", "--repo", str(repo.path), "--all", "--out", str(out), "--timeout", "600")
    with cleanup(killed) as groups:
        pgid, helper = wait_for(marker, killed)
        groups.append(pgid)
        killed.kill()
        killed.communicate(timeout=30)
        time.sleep(0.5)
        assert group_exists(pgid) and alive(helper), "SIGKILL gives histeg no chance: the traced test sleeps on"
        left = leftovers(out / "0")
        assert ".run" in left and any(name.startswith(".traces-new-") for name in left)
        following = histeg("extract", "--repo", str(repo.path), "--all", "--out", str(out))
        assert following.code == 0, following.stderr
        [said] = [line for line in following.stderr.splitlines() if "ended 1 process group" in line]
        assert str(pgid) in said
    assert gone(pgid) and not alive(helper)
    assert leftovers(out / "0") == [] and list(records_folder(out).iterdir()) == []
    assert end_orphans(out) == []


def orphan(out: Path, shell: str) -> int:
    """A process group started and recorded by a process that then exits: what a killed histeg leaves."""
    program = (
        "import subprocess, sys\n"
        "from pathlib import Path\n"
        "from histeg.processes.groups import record, records_folder\n"
        f"child = subprocess.Popen(['/bin/sh', '-c', {shell!r}], start_new_session=True, stdin=subprocess.DEVNULL,\n"
        "                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"record(records_folder(Path({str(out)!r})), child.pid, child.args)\n"
        "print(child.pid)\n"
    )
    return int(subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout)


def test_orphans_are_ended_and_a_pid_given_to_another_process_is_spared(tmp_path: Path) -> None:
    out = tmp_path / "out"
    orphaned = orphan(out, "sleep 300")
    leaderless = orphan(out, "sleep 300 & sleep 0.2")  # the leader ends, its background process stays in the group
    finished = subprocess.Popen(["true"])
    finished.wait()
    stranger = subprocess.Popen(["sleep", "300"], start_new_session=True)
    running = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        started = start_time(stranger.pid)
        assert started is not None
        # the group a histeg that is gone recorded ended long ago, and its pid is another process's now
        (records_folder(out) / f"{stranger.pid}.json").write_text(json.dumps(
            {"pgid": stranger.pid, "started": started - 1, "owner": finished.pid, "ownerStarted": 1, "argv": ["sleep", "300"]}))
        (records_folder(out) / "damaged.json").write_text("{")
        mine = record(records_folder(out), running.pid, ["sleep", "300"])  # its histeg (this process) runs: not an orphan
        assert mine is not None
        time.sleep(0.5)
        assert group_exists(leaderless) and not alive(leaderless), "the leader is gone, the group is not"
        (out / "0" / ".run").mkdir(parents=True)
        (out / "0" / ".run" / "left.txt").write_text("by a killed run")
        assert sorted(end_orphans(out)) == sorted([orphaned, leaderless])
        assert gone(orphaned) and gone(leaderless)
        assert stranger.poll() is None, "a record whose start time differs names another process: never killed"
        assert running.poll() is None and [path.name for path in records_folder(out).iterdir()] == [mine.name]
        assert not (out / "0" / ".run").exists()
    finally:
        for process in (stranger, running):
            process.kill()
            process.wait()


def test_a_chatty_suite_is_capped_and_uses_no_temporary_space(tmp_path: Path) -> None:
    """200 MB of output, printed by a command that may not write a file over 16 MB: only a pipe drained as it
    fills lets it finish; histeg keeps the first and last lines and says how much it cut."""
    store = make_version(tmp_path / "out", PASSING)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    chatty = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))\n"
        "sys.stdout.write('first line\\n')\n"
        "line = 'x' * 1023 + '\\n'\n"
        "for _ in range(200 * 1024):\n"
        "    sys.stdout.write(line)\n"
        "sys.stdout.write('last line\\n')\n"
    )
    (tmp_path / "chatty.py").write_text(chatty)
    command = f"{sys.executable} {tmp_path / 'chatty.py'}"
    program = (
        "from pathlib import Path\n"
        "from histeg.runs.commands import shell_command\n"
        "from histeg.runs.runner import run_traces\n"
        "from histeg.store import OutputStore\n"
        f"run_traces(OutputStore(Path({str(store.root)!r})), 0, [shell_command({command!r})], timeout=120)\n"
    )
    subprocess.run([sys.executable, "-c", program], env={**os.environ, "TMPDIR": str(temporary)}, check=True, timeout=300)
    [run] = Runs.read(store.file(0, RUNS)).runs
    assert (run.outcome, run.exit_code) == ("passed", 0)
    log = store.version_dir(0) / run.log
    assert log.stat().st_size <= 2 * (HEAD_BYTES + TAIL_BYTES) + 4096
    text = log.read_text()
    assert text.split("--- stdout (tail) ---\n")[1].startswith("first line\n") and "last line\n" in text
    printed = len("first line\n") + 200 * 1024 * 1024 + len("last line\n")
    kept = text.split("--- stdout (tail) ---\n")[1].split("\n--- stderr (tail) ---")[0]
    cut = int(text.split("output cut: ")[1].split(" bytes of stdout")[0])
    _, tail = kept.split(f"[... {cut} bytes cut ...]\n")
    assert HEAD_BYTES + cut + len(tail.encode()) == printed and len(tail.encode()) <= TAIL_BYTES
    assert run.output_truncated_bytes == cut, "runs.json says how much of the output the log lacks"
    files = [Path(folder, name) for folder, _, names in os.walk(temporary) for name in names]
    assert [path for path in files if not path.is_symlink()] == [], "only the tracer's link to histeg is left in the temporary folder"
    assert sum(path.stat().st_size for path in store.version_dir(0).rglob("*") if path.is_file()) < 1 << 20


def test_output_within_the_cap_is_kept_whole(tmp_path: Path) -> None:
    text = "".join(f"line {n}\n" for n in range(3000))  # 30 KiB: under HEAD_BYTES + TAIL_BYTES
    (tmp_path / "text").write_text(text)
    result = run_process(["/bin/sh", "-c", f"cat {tmp_path / 'text'}; echo oops >&2"], tmp_path, os.environ, 30)
    assert (result.stdout_tail, result.stderr_tail, result.output_truncated_bytes) == (text, "oops\n", 0)


def test_an_interrupted_retrace_leaves_the_earlier_traces_as_they_were(tmp_path: Path) -> None:
    store = make_version(tmp_path / "out", PASSING)
    run_traces(store, 0, timeout=120)
    before = {path.relative_to(store.version_dir(0)): path.read_bytes()
              for path in [store.file(0, RUNS), *store.traces(0).rglob("*")] if path.is_file()}
    marker = tmp_path / "running"
    waits = f"echo $$ > {marker}.tmp && mv {marker}.tmp {marker} && sleep 300"  # the shell leads the run's group
    program = (
        "from pathlib import Path\n"
        "from histeg.runs.commands import shell_command\n"
        "from histeg.processes.interrupt import handling_signals\n"
        "from histeg.runs.runner import run_traces\n"
        "from histeg.store import OutputStore\n"
        "with handling_signals():\n"  # as histeg's command line runs it: a signal while a run starts waits until its group is recorded
        f"    run_traces(OutputStore(Path({str(store.root)!r})), 0, [shell_command('true'), shell_command({waits!r})], timeout=600)\n"
    )
    retrace = subprocess.Popen([sys.executable, "-c", INTERRUPTIBLE + program], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert retrace.poll() is None and time.monotonic() < deadline, retrace.stderr.read() if retrace.stderr else ""
        time.sleep(0.05)
    pgid = int(marker.read_text())
    assert leftovers(store.version_dir(0))[0] == ".run"
    retrace.send_signal(signal.SIGINT)  # KeyboardInterrupt: the runs' finally blocks stop the group and remove the copy
    _, stderr = retrace.communicate(timeout=60)
    assert retrace.returncode != 0 and "KeyboardInterrupt" in stderr
    assert gone(pgid)
    after = {path.relative_to(store.version_dir(0)): path.read_bytes()
             for path in [store.file(0, RUNS), *store.traces(0).rglob("*")] if path.is_file()}
    assert after == before
    assert leftovers(store.version_dir(0)) == [] and list(records_folder(store.root).iterdir()) == []


def test_a_run_in_another_thread_stops_when_asked(tmp_path: Path) -> None:
    """Only the main thread gets the signal's exception; the re-runs in worker threads are stopped through an event."""
    stop = threading.Event()
    outcome: list[BaseException] = []
    marker = tmp_path / "started"

    def run() -> None:
        try:
            run_process(["/bin/sh", "-c", f"trap '' INT; touch {marker}; sleep 300"], tmp_path, os.environ, 600, grace=0.5,
                        groups=records_folder(tmp_path), stop=stop)
        except BaseException as exc:  # what it raises is what the test looks at
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while not (marker.exists() and records_folder(tmp_path).is_dir() and any(records_folder(tmp_path).iterdir())):
        assert time.monotonic() < deadline  # the group is recorded after the start: the shell may run first
        time.sleep(0.05)
    [recorded] = records_folder(tmp_path).iterdir()
    pgid = int(recorded.stem)
    started = time.monotonic()
    stop.set()
    worker.join(30)
    assert not worker.is_alive() and time.monotonic() - started < 10
    assert [type(exc) for exc in outcome] == [interrupt.Stopped]
    assert gone(pgid) and list(records_folder(tmp_path).iterdir()) == []


@pytest.mark.slow  # waits out a time limit (5 s)
def test_uv_and_what_it_starts_end_at_its_time_limit(tmp_path: Path) -> None:
    """uv runs in a recorded process group of its own, like a traced run: a build that hangs (here a process uv
    starts, which starts another) is ended whole at the time limit, and the group's record is gone after."""
    from histeg.envs.uv import run_uv

    marker = tmp_path / "pids"
    program = ("import os, subprocess, time; subprocess.Popen(['sleep', '300']); "
               f"open({str(marker)!r}, 'w').write(str(os.getpgid(0))); time.sleep(300)")
    records = records_folder(tmp_path / "out")
    records.mkdir(parents=True)
    started = time.monotonic()
    result = run_uv(["run", "--no-project", "--python", sys.executable, "python", "-c", program], tmp_path / "uv.log",
                    cwd=tmp_path, timeout=5, groups=records)
    assert time.monotonic() - started < 60
    assert not result.ok and "timed out after 5 s" in (tmp_path / "uv.log").read_text()
    assert gone(int(marker.read_text())), "the processes uv started outlived its time limit"
    assert list(records.iterdir()) == []

