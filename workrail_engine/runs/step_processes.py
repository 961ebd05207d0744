"""The processes a step started, wherever they went: found by a token in their environment.

A command step runs in a process group of its own (a session too where the engine has a terminal:
see `command_process`), and the group is what `command_process`
stops on timeout, cancel and at the step's end. A child can leave the group (``setsid``, a daemon's
double fork) and live on — holding the step's pipes open, or merely outliving it. Such a process
still carries the environment it was started with, so every step gets a token of its own in
``WORKRAIL_STEP``, and this module finds the step's processes in ``/proc``: the members of its
group, every process whose environment holds the token, and every descendant of those (a child
that cleared its environment is still found through its parent).

The engine process also makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux
≥ 3.4, no privilege needed): a process whose parent dies is re-parented to the engine instead of to
init. Two things follow. After a step ends normally, reading the engine's own children (one file,
``/proc/<pid>/task/<pid>/children``) tells whether anything of the step escaped, so only then is
``/proc`` scanned (a scan costs milliseconds; a step of a 1 ms command cannot pay that every
time). And escaped processes, once killed, are reaped here rather than left as zombies.

Why not a cgroup per step: putting a child in a cgroup before it runs needs ``clone3`` with
``CLONE_INTO_CGROUP`` (not in ``subprocess``), a ``preexec_fn`` (which can deadlock a threaded
server) or a wrapper process per step; and CI containers often have no writable cgroup v2 tree
(the machine this was written on mounts cgroup v1 controllers and an empty unified hierarchy).
The token and the subreaper need nothing but ``/proc``.

A process that both cleared its environment and lost its parent before anyone looked
(``env -i sh -c '(setsid sleep 1000 &)'``) carries nothing of its step, but it is re-parented
here, and the kernel records when it started. Each step is remembered as the interval from its
main process's start to its end; when a step ends, every live process re-parented to the engine
(in a process group other than the engine's own) that started inside that interval, and inside no
step still running, is stopped with its descendants. One that started during a step still running as
well waits for that step's end; one that started outside every step (a database server a caller
of the engine started, say) is left alone.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterable

__all__ = [
    "ENV_NAME",
    "become_subreaper",
    "ended_own",
    "held_descriptor",
    "spawning",
    "new_token",
    "reap_orphans",
    "signal_all",
    "step_processes",
    "stop_all",
]

ENV_NAME = "WORKRAIL_STEP"
_PR_SET_CHILD_SUBREAPER = 36
_counter = itertools.count(1)
_subreaper: bool | None = None
_subreaper_lock = threading.Lock()


_salt: tuple[int, str] = (0, "")  # (pid, random part): one per process, a fork gets its own


def new_token() -> str:
    """Unique among the steps of every process, past and present: the pid, a random part drawn
    once per process (a later process with the same pid draws another), a counter. (A random
    part per step cost a read of the kernel's random source per step.)"""
    global _salt
    pid = os.getpid()
    if _salt[0] != pid:
        _salt = (pid, secrets.token_hex(4))
    return f"{pid}-{_salt[1]}-{next(_counter)}"


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (once); whether it is."""
    global _subreaper
    if _subreaper is not None:  # asked before every step's spawn: no lock once known
        return _subreaper
    with _subreaper_lock:
        if _subreaper is None:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):  # not Linux
                _subreaper = False
        return _subreaper


def _stat(pid: int | str) -> tuple[str, int, int, int] | None:
    """(state, parent, process group, start time in clock ticks since boot) of a process, None
    when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    # the command name may hold spaces and parentheses: the fields follow the last ')'
    fields = text[text.rfind(b")") + 2 :].split()
    try:
        return (
            fields[0].decode(),
            int(fields[1]),
            int(fields[2]),
            int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


def _has_token(pid: int | str, entry: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:  # gone, a zombie, or another user's
        return False
    return entry in environ.split(b"\0")


def _entry(token: str) -> bytes:
    return f"{ENV_NAME}={token}".encode()


def step_processes(
    tokens: Iterable[str], groups: Iterable[int] = (), roots: Iterable[int] = ()
) -> set[int]:
    """Every live process of the given steps: members of their groups, holders of their tokens,
    the ``roots``, and the descendants of those. Scans /proc (milliseconds): for timeouts,
    cancels, escapes."""
    entries = {_entry(token) for token in tokens}
    groups = set(groups)
    roots = set(roots)
    own = os.getpid()
    parents: dict[int, int] = {}
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == own:
            continue
        stat = _stat(name)
        if stat is None or stat[0] == "Z":
            continue
        pid = int(name)
        parents[pid] = stat[1]
        if (
            pid in roots
            or stat[2] in groups
            or (entries and any(_has_token(name, e) for e in entries))
        ):
            found.add(pid)
    # descendants: walk up each process's parents until a found one (or the top)
    for pid in parents:
        chain: list[int] = []
        current = pid
        while current in parents and current not in found and len(chain) < 4096:
            chain.append(current)
            current = parents[current]
        if current in found:
            found.update(chain)
    return found


_held: dict[str, int] = {}  # path → a descriptor of it this process keeps open
_holding = threading.Lock()


def held_descriptor(path: str, flags: int) -> int:
    """A descriptor of ``path`` opened once and kept (close-on-exec), for files read or handed
    out at every step, where opening and closing each time cost two system calls. A path that
    names a process's own files (``/proc/PID/...``) is another path in a forked child."""
    fd = _held.get(path)
    if fd is None:
        with _holding:
            fd = _held.get(path)
            if fd is None:
                fd = _held[path] = os.open(path, flags | os.O_CLOEXEC)
    return fd


def _children() -> list[int]:
    """This process's children (those re-parented to it land on the main thread). The caller
    holds ``_mains_lock``.

    Read at every step's end, so with one system call: the file is opened once per process and
    read again from its start (``pread`` at 0 makes the kernel list the children anew; opening,
    reading to the end and closing it each time cost 8 µs a read here, this 2.7)."""
    own = os.getpid()
    try:
        fd = held_descriptor(f"/proc/{own}/task/{own}/children", os.O_RDONLY)
        listed = os.pread(fd, 65536, 0)
        while len(listed) % 65536 == 0 and listed:  # a full read: there may be more
            more = os.pread(fd, 65536, len(listed))
            if not more:
                break
            listed += more
        return [int(pid) for pid in listed.split()]
    except OSError:  # no CONFIG_PROC_CHILDREN: look at every process's parent
        return [
            int(name)
            for name in os.listdir("/proc")
            if name.isdigit() and (_stat(name) or ("", 0))[1] == own
        ]


_TICKS = os.sysconf("SC_CLK_TCK")  # the clock of a process's start time in /proc/<pid>/stat


def _now_ticks(*, round_up: bool = True) -> int:
    """Now, in the clock of a process's start time in ``/proc/<pid>/stat`` (rounded up, or down)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _TICKS) + round_up


# Reaping a child here takes its exit status away from whoever waits for it. The children this
# process started itself are the steps' main processes (registered in `spawning` before anything
# else can see them) and the subprocesses other code runs in the process's own group; everything
# else among its children was re-parented to it as a subreaper, and nobody else will reap it.
_mains: set[int] = set()
_mains_lock = threading.Lock()
# each running step's main process -> when it started, at the latest (clock ticks since boot)
_began: dict[int, int] = {}


class spawning:
    """Hold while starting a step's main process and registering it with `started`."""

    def __enter__(self) -> spawning:
        _mains_lock.acquire()
        # The tick the spawn began in: what the process's own start time would say, give or take
        # a tick boundary crossed while spawning. Reading that from /proc/<pid>/stat instead cost
        # 0.1–0.2 ms a step here, a tenth of spawning `true`.
        self.began = _now_ticks(round_up=False)
        return self

    def __exit__(self, *exc: object) -> None:
        _mains_lock.release()

    def started(self, pid: int) -> None:
        _mains.add(pid)
        _began[pid] = self.began

    def started_own(self, pid: int) -> None:
        """A process of the engine's own in a session of its own (a worker), not a step's: never
        taken for a step's escapee — a server that starts a worker as it exits mid-step must not
        stop it with the step's leftovers. `ended_own` once it has been waited for."""
        _mains.add(pid)


def ended_own(pid: int) -> None:
    with _mains_lock:
        _mains.discard(pid)


def ended(pid: int, token: str, grace: float = 2.0, *, killed: bool = False) -> None:
    """The step's main process has been waited for (and what it left in its group stopped).

    One read of this process's children — at the end of every step, so it must be cheap — reaps
    the zombies re-parented here and finds what else the step left running: a still-living
    process holding the step's token (it left the group and lost its parent), and the processes
    that only this step can have started (see the module's docstring). Every process of the step
    is then stopped if one escaped or the step was ``killed`` (timeout, cancel), and those
    orphans with their descendants — before the run's next step starts (a leftover server of one
    step must not meet the next one: its port, its files)."""
    escaped = False
    orphans: set[int] = set()
    with _mains_lock:
        _mains.discard(pid)
        began = _began.pop(pid, None)
        end = _now_ticks()
        children = _children()
        if children:  # (most steps leave none: nothing below to work out for them)
            entry = _entry(token)
            # no step still running can have started a process older than its own start
            earliest_running = min(_began.values(), default=None)
            own_group = os.getpgid(0)
        for child in children:
            if child in _mains:
                continue
            stat = _stat(child)
            if stat is None:
                continue
            state, _, group, started = stat
            if state == "Z":
                if group != own_group:
                    _reap(child)
                continue
            escaped = escaped or _has_token(child, entry)
            if (
                group != own_group
                and began is not None
                and began <= started <= end
                and (earliest_running is None or started < earliest_running)
            ):
                orphans.add(child)
    if escaped or killed:
        stop_all([token], [pid], grace)
    if orphans:
        _stop_found(lambda: step_processes((), (), orphans), grace)


def reap_orphans() -> None:
    """Reap the zombies re-parented to this process (never a child it started itself)."""
    with _mains_lock:
        own_group = os.getpgid(0)
        for pid in _children():
            if pid not in _mains:
                stat = _stat(pid)
                if stat is not None and stat[0] == "Z" and stat[2] != own_group:
                    _reap(pid)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop_all(tokens: Iterable[str], groups: Iterable[int] = (), grace: float = 2.0) -> None:
    """SIGTERM every process of the steps, SIGKILL what is left after ``grace`` (looking again,
    so that what they started meanwhile goes too), and reap what was re-parented here."""
    tokens, groups = list(tokens), list(groups)
    _stop_found(lambda: step_processes(tokens, groups), grace)


def _stop_found(find: Callable[[], set[int]], grace: float) -> None:
    """SIGTERM what ``find`` finds, SIGKILL what it still finds after ``grace``; reap."""
    pids = find()
    if not pids:
        return
    signal_all(pids, signal.SIGTERM)
    end = time.monotonic() + grace
    while time.monotonic() < end:
        time.sleep(0.02)
        reap_orphans()
        if not find():
            return
    for _ in range(50):  # SIGKILL cannot be ignored; what is left was forked meanwhile
        pids = find()
        if not pids:
            break
        signal_all(pids, signal.SIGKILL)
        time.sleep(0.01)
        reap_orphans()
    reap_orphans()
