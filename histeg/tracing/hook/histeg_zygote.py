"""A pytest process that imports pytest once and forks each re-run from there (``histeg.processes.zygote``).

Started as ``python -m pytest`` with ``HISTEG_ZYGOTE`` set, the start-up hook hands over to ``serve`` before the
interpreter runs pytest: pytest is imported (a third to a half of a one-test run's CPU), and the process answers
requests on its stdin. For each it forks a child that becomes the run a fresh ``python -m pytest ARGS`` would be: its
own session, its working directory, output and environment, the ``sys.path`` that environment makes, its arguments,
the signal dispositions and modules of a fresh start; ``serve`` then returns in that child alone, so the hook carries
on (tracing starts) and the interpreter runs pytest as it always does. The zygote itself never returns: it waits for
its children (a pidfd each), ends what a child left in its group, reaps it and answers with its wait status.

The zygote's objects are frozen (``gc.freeze``) before each fork, as Python's documentation advises a process that
forks without exec: a child's collections (pytest makes full ones at its end) then neither traverse them nor write to
their pages, which halved a forked one-test run's CPU. None of them is the project's; what a run sees of it is that
``gc.get_objects()`` does not list them and ``gc.get_freeze_count()`` counts them.

A run is refused (and made by a fresh process) when the fork could not be that fresh start: an environment that
differs in more than ``PYTHONPATH`` and the trace config, or a module the zygote imported that the run's own
folders (its working directory, its ``PYTHONPATH``) would have shadowed. Messages are a 4-byte length and a
``marshal`` payload, in both directions; replies go to the pipe each request names (``/proc/PID/fd/N``).

Runs in the project's interpreter: the standard library only, and at start-up only modules the interpreter's own start
has loaded (the others after pytest, which loads them anyway; those it does not are taken out of each run).
"""

import marshal
import os
import sys

ZYGOTE_ENV = "HISTEG_ZYGOTE"
TRACED = "traced"
"""``ZYGOTE_ENV``'s value for a zygote of traced runs: the tracer's modules are imported too, as a traced start does."""
CONFIG_ENV = "HISTEG_TRACE_CONFIG"
PER_RUN = ("PYTHONPATH", CONFIG_ENV)
"""What a run's environment may differ in from the zygote's: read after start-up, or rebuilt in the child."""


def send(fd: int, message: object) -> None:
    data = marshal.dumps(message)  # type: ignore[arg-type]  # tuples, dicts and lists of str and int
    data = len(data).to_bytes(4, "little") + data
    while data:
        data = data[os.write(fd, data) :]


def receive(fd: int) -> object:
    """The next message; None at the end of the stream."""
    head = _read_exactly(fd, 4)
    if head is None:
        return None
    body = _read_exactly(fd, int.from_bytes(head, "little"))
    return None if body is None else marshal.loads(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def search_path(pythonpath: str) -> list[str]:
    """The entries a ``PYTHONPATH`` puts first on ``sys.path``, as ``site`` leaves them (absolute, each once)."""
    entries: list[str] = []
    for part in pythonpath.split(os.pathsep):
        if part:
            entry = os.path.abspath(part)
            if entry not in entries:
                entries.append(entry)
    return entries


class _Zygote:
    def __init__(self, traced: bool, startup: set[str], imported: set[str]) -> None:
        """``startup``: the modules the interpreter's start had loaded; ``imported``: those loaded by pytest's import."""
        self.traced = traced
        import importlib.machinery
        import selectors

        self.machinery = importlib.machinery
        self.env = dict(os.environ)
        del self.env[ZYGOTE_ENV]
        self.front = search_path(self.env.get("PYTHONPATH", ""))
        self.rest = sys.path[len(self.front) :]
        self.startup = sorted(name for name in startup if "." not in name)
        """Top-level modules imported before pytest: a fresh start imports them before its working directory is on ``sys.path``."""
        self.imported = sorted(name for name in imported - startup if "." not in name)
        """Top-level modules ``import pytest`` loaded: a fresh start imports them with its working directory first."""
        self.extra = sorted({*(set(sys.modules) - imported), __name__})
        """The zygote's own modules, which a fresh start does not have: taken out of each run."""
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, reply fd)

    def unusable(self) -> str | None:
        """Why no run could be forked from here as from a fresh start, or None."""
        if sys.path[: len(self.front)] != self.front:
            return "sys.path does not start with PYTHONPATH"
        here = os.path.dirname(os.path.abspath(__file__))
        others = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
        if self.machinery.PathFinder.find_spec("sitecustomize", others) is not None:
            return "another sitecustomize runs at start-up"
        if "usercustomize" in sys.modules:
            return "a usercustomize runs at start-up"
        try:  # where each run's pipes are opened: a system that hides it makes every run fresh, and at once
            os.close(os.open(f"/proc/{os.getppid()}/fd", os.O_RDONLY | os.O_DIRECTORY))
        except OSError as exc:
            return f"it cannot open histeg's pipes: {exc}"
        return None

    def refusal(self, request: dict) -> str | None:
        """Why this run must be a fresh process, or None."""
        env = request["env"]
        if (CONFIG_ENV in env) != self.traced:
            return "it is not traced, the zygote's runs are" if self.traced else "it is traced, the zygote's runs are not"
        differing = sorted(key for key in env.keys() | self.env.keys() if key not in PER_RUN and env.get(key) != self.env.get(key))
        if differing:
            return f"its environment differs in {', '.join(differing[:3])}"
        front = search_path(env.get("PYTHONPATH", ""))
        if any(entry not in front for entry in self.front):
            return "its PYTHONPATH lacks one of the zygote's"
        ahead = [entry for entry in front if entry not in self.front and entry not in self.rest]
        try:
            for names, path in ((self.startup, ahead), (self.imported, [request["cwd"], *ahead])):
                for name in names:
                    spec = self.machinery.PathFinder.find_spec(name, path)
                    if spec is not None and spec.origin is not None:  # a namespace portion shadows nothing loaded
                        return f"{spec.origin} would shadow the module {name}"
        finally:
            for entry in [request["cwd"], *ahead]:
                sys.path_importer_cache.pop(entry, None)
        return None

    def serve(self) -> dict:
        """Answers requests until stdin ends, then exits once its runs have ended; returns in a forked child, with its
        request."""
        import selectors

        self.selector.register(0, selectors.EVENT_READ)
        while True:
            for key, _ in self.selector.select():
                if key.fd == 0:
                    request = receive(0)
                    if request is None:
                        self.selector.unregister(0)
                    else:
                        assert isinstance(request, dict)
                        if self.start(request):
                            return request
                else:
                    self.reap(key.fd)
            if 0 not in self.selector.get_map() and not self.children:
                os._exit(0)

    def start(self, request: dict) -> bool:
        """Forks the run (True in the child, its streams in ``request["fds"]``); the parent answers ``("pid", pid)`` or
        ``("refused", why)``."""
        try:  # opened before the fork: histeg closes its ends once it has the answer
            reply, *streams = (
                os.open(f"/proc/{request['parent']}/fd/{request[name]}", os.O_WRONLY) for name in ("reply", "stdout", "stderr")
            )
        except OSError:
            return False  # histeg is gone, or the run given up: nobody to answer
        why = self.refusal(request)
        pid = -1
        if why is None:
            import gc

            gc.freeze()  # the child's collections skip (and so never write to) the zygote's objects
            try:
                pid = os.fork()
            except OSError as exc:
                why = f"fork failed: {exc}"
        if pid == 0:
            os.close(reply)
            request["fds"] = streams
            return True
        for fd in streams:
            os.close(fd)
        if why is not None:
            send(reply, ("refused", why))
            os.close(reply)
            return False
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (pid, reply)
        self.selector.register(pidfd, 1)
        try:
            send(reply, ("pid", pid))
        except OSError:  # histeg gave up waiting and runs it afresh: this one must not run beside it
            import signal

            os.kill(pid, signal.SIGKILL)
        return False

    def reap(self, pidfd: int) -> None:
        """A child exited: whatever it left in its group is killed, then it is reaped (so its group id stays its own
        until then) and its wait status sent."""
        import contextlib
        import signal

        pid, reply = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        with contextlib.suppress(OSError):
            send(reply, ("exit", status))
        os.close(reply)

    def become(self, request: dict) -> None:
        """In the child: what a fresh ``python -m pytest ARGS`` in the run's folder and environment would be at this point."""
        os.setsid()
        for fd in [*self.children, *(reply for _, reply in self.children.values())]:
            os.close(fd)
        self.selector.close()
        for target, fd in enumerate([os.open(os.devnull, os.O_RDONLY), *request["fds"]]):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        front = search_path(request["env"].get("PYTHONPATH", ""))
        sys.path[:] = [*front, *(entry for entry in self.rest if entry not in front)]
        sys.argv[:] = ["-m", *request["args"]]
        sys.orig_argv[:] = request["orig_argv"]
        for name in self.extra:
            sys.modules.pop(name, None)


def serve() -> None:
    """The hook's entry in a zygote: returns only in a forked run, ready for the interpreter to run pytest."""
    try:
        traced = os.environ[ZYGOTE_ENV] == TRACED
        if traced:  # what a traced run's start imports, before pytest (``histeg.tracing.session.begin``)
            from histeg.tracing import coverage, monitor, native, session, tracers  # noqa: F401
        before = set(sys.modules)
        import pytest  # noqa: F401  what every run imports first, now once

        imported = set(sys.modules)
        import gc

        zygote = _Zygote(traced, before, imported)
        gc.collect()  # what pytest's import left unreachable goes now, not frozen into every run
        why = zygote.unusable()
        send(1, ("unusable", why) if why is not None else ("ready",))
        if why is not None:
            os._exit(0)
        zygote.become(zygote.serve())
    except BaseException as exc:  # noqa: BLE001  never run pytest here: the zygote has no run of its own
        try:
            sys.stderr.write(f"histeg zygote: {type(exc).__name__}: {exc}\n")
            sys.stderr.flush()
        finally:
            os._exit(70)
