"""The sandboxed side of the course's grader (tools/grade_course.py, issue 36): the only process that
runs a student's code. Started by the grader as ``python tools/sandbox.py PLAN FD`` (which imports
only its helpers ``transform`` and ``read_exact``).

It starts as the **zygote** of a chapter: it runs the chapter's own code up to its exercises (the
instructor's source, never a submission), then waits on the socket ``FD`` for the grader. For each
(student, exercise) the grader sends two pipe ends; the zygote forks a **child**, reports its pid, waits
for it and reports how it ended (exit status or signal). The child alone runs student code, after it
has locked itself in, in this order:

1. its own session, standard input from /dev/null, standard output and error into ``output.txt`` of its
   scratch folder, every other file descriptor closed but its two pipes to the grader;
2. resource limits (``setrlimit``): address space (``--memory``), CPU seconds, size of a file it
   writes, number of open files; no core dumps;
3. if the grader runs as root: the user ``nobody`` (no right to write the course, and ``RLIMIT_NPROC``
   applies); the scratch folder is given to it first;
4. Landlock (Linux 5.13 and later, unprivileged): the kernel lets it read only the Python installation,
   the book's library and the system's folders, write only its scratch folder and ``/dev/null``, make
   no TCP connection, and signal no process outside its sandbox; where the kernel has no Landlock, the
   layers above and below remain;
5. an audit hook (``sys.addaudithook``; Python offers no way to remove one) that stops the process at
   once, with the reason sent to the grader, on: a socket, a new process (``fork``, ``exec``,
   ``subprocess``, ``os.system``, ``posix_spawn``), a signal sent, ``ctypes`` (which could call the C
   library directly), a change of a resource limit, SQLite, a file opened for writing (or removed,
   renamed, linked, ...) outside the scratch folder, and a file read or listed in the course's folder
   or nbgrader's exchange (the instructor's source, the gradebook, every submission) or in the
   repository's grading/ (the grader's cases and references).

Then it runs what the grader sends, one request at a time: a cell (the chapter's locked cells of the
exercises section, the student's answer cells, compiled as ``<answer GRADE_ID>`` so that tracebacks
name them), the values the test passes to its checker, and calls of the student's functions with the
checker's arguments (the grader's requests are trusted: they may hold a model of the chapter's,
pickled). What it sends back is data only: tensors, numbers, strings, lists, tuples, dicts, sets and
NumPy arrays, a module as its class name and weights, anything else as its type name and a short repr
(``encode``), written with ``torch.save`` and read by the grader with ``torch.load(weights_only=True)``,
which builds no object of the student's. A student's code can therefore reach the verdict only through
what its functions return. Python's builtins are put back after each cell and call (the harness uses
them), and a library function an exercise forbids (``REFUSALS`` of the chapter's checkers) has its
code swapped for a guard that refuses the student's function's calls of it.

Messages: 1 byte (``J`` JSON, ``T`` torch.save) + 8-byte big-endian length + payload.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import io
import json
import os
import resource
import signal
import socket
import struct
import sys
import time
import traceback
import types

VIOLATION_EXIT = 86  # the exit status of a child the audit hook stopped
NOBODY = 65534


def book_kernels() -> dict[str, str]:
    """The CPU kernel path the book's build runs the chapters on (``KERNEL_PATH`` of
    tools/sync_colab_cell.py: the Makefile's exports and the chapters' setup cell), where the
    processor runs AVX2 as the setup cell asks; ``{}`` elsewhere. torch reads it once, when first
    imported, and the zygote imports torch before the chapter's setup cell runs: without it, a
    grading run started outside ``make`` trained the chapter on the processor's own kernels, and
    chapter 5's checks of its text failed in the sandbox (course review s27, M1)."""
    import platform

    from sync_colab_cell import KERNEL_PATH, has_avx2

    x86 = platform.machine().lower() in ("x86_64", "amd64")
    return dict(KERNEL_PATH) if x86 and has_avx2() else {}


def use_book_kernels(environ: dict | os._Environ = os.environ) -> None:
    """Set :func:`book_kernels` in ``environ`` where it is not set (as the Makefile's ``?=``)."""
    for name, value in book_kernels().items():
        environ.setdefault(name, value)


# --- framing (the grader reads the same format) -------------------------------------------------------


def send(fd: int, kind: bytes, payload: bytes) -> None:
    data = kind + struct.pack(">Q", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exact(fd: int, n: int, deadline: float | None = None) -> bytes:
    """``n`` bytes from ``fd``; with a ``deadline`` (``time.monotonic()``; the grader's side, so that
    a child that stops writing cannot make it wait), ``TimeoutError`` past it."""
    chunks, left = [], n
    while left:
        if deadline is not None:
            import select  # the grader's side only: the child always waits

            if not select.select([fd], [], [], max(deadline - time.monotonic(), 0))[0]:
                raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(fd: int) -> dict:
    import torch

    kind = read_exact(fd, 1)
    (n,) = struct.unpack(">Q", read_exact(fd, 8))
    payload = read_exact(fd, n)
    if kind == b"J":
        return json.loads(payload)
    # the grader's requests (trusted: the checker's cases, which may hold a model of the chapter's);
    # the grader reads this process's replies with weights_only=True
    return torch.load(io.BytesIO(payload), weights_only=False)


def send_data(fd: int, message: dict) -> None:
    import torch

    buffer = io.BytesIO()
    torch.save(message, buffer)
    send(fd, b"T", buffer.getvalue())


# --- data the grader can read --------------------------------------------------------------------------


def encode(x, depth: int = 0):
    """``x`` as plain data for the grader: built-in scalars, plain tensors, and tagged dicts for the rest.
    Runs in the child, so a student's ``__len__`` or ``state_dict`` may run here, and may lie only about
    the student's own result."""
    import numpy as np
    import torch

    if depth > 20:
        return {"__object__": type(x).__name__, "repr": "..."}
    kind = type(x)
    if x is None or kind in (bool, int, float, str):
        return x
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            t = torch.Tensor.as_subclass(x, torch.Tensor)
            if t.layout != torch.strided or t.device.type != "cpu" or t.is_complex():
                return {"__object__": "Tensor", "repr": f"a {t.layout} tensor on {t.device}"}
            return t.detach().clone().contiguous()
    if isinstance(x, np.generic) and isinstance(x, (np.bool_, np.integer, np.floating)):
        return {"__numpy__": encode(x.item(), depth + 1), "dtype": str(x.dtype)}
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "biuf":
            return {"__ndarray__": torch.from_numpy(np.ascontiguousarray(x).copy())}
        return {"__object__": "ndarray", "repr": f"array of dtype {x.dtype}"}
    if isinstance(x, list):
        return [encode(v, depth + 1) for v in list.copy(x)]
    if isinstance(x, tuple):
        return {"__tuple__": [encode(v, depth + 1) for v in tuple.__getitem__(x, slice(None))]}
    if isinstance(x, (set, frozenset)):
        return {"__set__": [encode(v, depth + 1) for v in x]}
    if isinstance(x, dict):
        return {
            "__dict__": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in dict.items(x)]
        }
    if isinstance(x, torch.nn.Module):
        cls = type(x)
        path = f"{cls.__module__}.{cls.__qualname__}"
        if cls.__module__.startswith(("lib.", "torch.nn")) and not path.startswith("lib.exercises"):
            # a module of the library's (or torch's) class: its structure, weights and settings as
            # data; the grader rebuilds it as that class, which runs there (the chapter's RNNLM)
            return {"__module__": path, "tree": _module_tree(x, settings=True)}
        # a module of the student's own class: its structure and weights as data, its forward here
        _REMOTE.append(x)
        return {"__remote__": len(_REMOTE) - 1, "tree": _module_tree(x), "name": cls.__name__}
    try:
        text = repr(x)
    except BaseException:
        text = f"<{kind.__name__}>"
    return {"__object__": kind.__name__, "repr": text[:80]}


_REMOTE: list = []  # the student's functions and modules the grader may call, by index


def _plain(v, depth: int = 0) -> bool:
    """Whether ``v`` is plain data (numbers, strings, None, and lists, tuples, sets and dicts of them)."""
    if depth > 5:
        return False
    if v is None or type(v) in (bool, int, float, str):
        return True
    if type(v) in (list, tuple, set, frozenset):
        return len(v) < 10000 and all(_plain(i, depth + 1) for i in v)
    if type(v) is dict:
        return len(v) < 10000 and all(
            type(k) is str and _plain(i, depth + 1) for k, i in dict.items(v)
        )
    return False


def _setting(v):
    """A module's setting as data, or None if it is not one: plain data, or a dataclass of the library's
    (a model's config) whose fields are plain."""
    import dataclasses

    if _plain(v):
        return {"value": encode(v, 1)}
    cls = type(v)
    if (
        dataclasses.is_dataclass(v)
        and not isinstance(v, type)
        and cls.__module__.startswith("lib.")
        and not cls.__module__.startswith("lib.exercises")
    ):
        fields = {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}
        if all(_plain(f) for f in fields.values()):
            return {
                "dataclass": f"{cls.__module__}.{cls.__qualname__}",
                "fields": encode(fields, 1),
            }
    return None


def _module_tree(root, settings: bool = False) -> dict:
    """{"root": id, "modules": {id: {"class", "tensors": {name: tensor}, "children": [[name, id]]}}}:
    a module's structure (shared submodules once, by id) and its parameters and buffers; with
    ``settings``, each module's other attributes that are data too (``reverse``, LSTM's
    ``_flat_weights_names``, a config dataclass), which a library class needs to run."""
    import torch

    modules, todo = {}, [root]
    while todo and len(modules) < 10000:
        m = todo.pop()
        if str(id(m)) in modules:
            continue
        cls = type(m)
        tensors = {}
        for name, t in list(m._parameters.items()) + list(m._buffers.items()):
            if isinstance(t, torch.Tensor):
                tensors[str(name)] = encode(t, 1)
        children = [[str(n), str(id(c))] for n, c in m._modules.items() if c is not None]
        modules[str(id(m))] = {
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "name": cls.__name__,
            "tensors": tensors,
            "parameters": [str(n) for n in m._parameters],
            "children": children,
            "attributes": {  # in_features, n_heads, eps ...: plain numbers and strings
                str(k): v
                for k, v in vars(m).items()
                if not str(k).startswith("_")
                and (
                    type(v) in (int, float, bool, str)
                    or (type(v) is tuple and all(type(i) is int for i in v))
                )
            },
        }
        if settings:
            found = {}
            for k, v in vars(m).items():
                if k not in ("_parameters", "_buffers", "_modules") and isinstance(k, str):
                    setting = _setting(v)
                    if setting is not None:
                        found[k] = setting
            modules[str(id(m))]["settings"] = found
        todo.extend(c for c in m._modules.values() if c is not None)
    return {"root": str(id(root)), "modules": modules}


def decode(x):
    """The grader's messages to the child (trusted data): the inverse of ``encode`` for what it sends."""
    if isinstance(x, list):
        return [decode(v) for v in x]
    if isinstance(x, dict):
        if "__tuple__" in x:
            return tuple(decode(v) for v in x["__tuple__"])
        if "__dict__" in x:
            return {decode(k): decode(v) for k, v in x["__dict__"]}
        if "__set__" in x:
            return {decode(v) for v in x["__set__"]}
        if "__ndarray__" in x:
            return x["__ndarray__"].numpy()
        if "__numpy__" in x:
            import numpy as np

            return np.dtype(x["dtype"]).type(decode(x["__numpy__"]))
        return {k: decode(v) for k, v in x.items()}
    return x


# --- the zygote ----------------------------------------------------------------------------------------


def transform(source: str) -> str:
    """A cell's source as plain Python: IPython's %magics and !commands become calls of get_ipython(),
    which the stub below answers with nothing. A cell without them is left as it is (its line numbers
    are the ones the student sees). The grader compiles the same text."""
    if not any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()):
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


class _NoShell:
    """``get_ipython()`` in the sandbox: plain Python runs the cells, so a magic does nothing, and a
    hook a student's cell installs on it (input transformers, events, exception handlers) is kept in
    lists nothing reads."""

    def __init__(self):
        self.input_transformers_cleanup, self.input_transformers_post = [], []
        self.ast_transformers, self.user_ns = [], {}

    def __getattr__(self, name):
        return _Nothing()


class _Nothing:
    """Whatever a cell asks of the stub shell: every attribute and call gives another nothing."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self


# Libraries an answer may import that, as they load, do what the audit hook stops: trio (which
# transformers pulls in) runs `/sbin/ldconfig -p` to find libpthread, torch.distributed's elastic
# redirects dlopen libc. Imported in the zygote, before any hook, they cost an answer nothing; an
# unused `from transformers... import` in an answer cell cost the exercise (lecturer review s17, M1).
PREIMPORT = ("trio", "transformers.modeling_utils")


def _preimport() -> None:
    """Import :data:`PREIMPORT` where installed (each child inherits them from the zygote)."""
    import importlib

    for name in PREIMPORT:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def zygote(plan_path: str, control_fd: int) -> None:
    plan = json.loads(open(plan_path).read())
    os.environ.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg")
    use_book_kernels()  # before torch is imported, which reads it once
    sys.path.insert(0, plan["root"])
    import matplotlib

    matplotlib.use("Agg")
    import torch

    torch.set_num_threads(1)
    _preimport()
    namespace = {"__name__": "__main__", "get_ipython": _NoShell}
    control = socket.socket(fileno=control_fd)
    start = time.monotonic()
    errors = []
    seconds = []
    for cell in plan["story"]:
        began = time.monotonic()
        try:
            exec(compile(transform(cell["source"]), cell["filename"], "exec"), namespace)
        except BaseException as e:  # noqa: BLE001 (a story cell that fails is reported, not fatal)
            errors.append(f"{cell['filename']}: {type(e).__name__}: {e}"[:500])
        seconds.append((round(time.monotonic() - began, 2), cell["filename"]))
    import matplotlib.pyplot as plt

    plt.close("all")
    control.sendall(
        json.dumps(
            {
                "ready": True,
                "seconds": time.monotonic() - start,
                "errors": errors,
                "slowest": sorted(seconds, reverse=True)[:5],
            }
        ).encode()
        + b"\n"
    )
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
        if not message:
            return
        order = json.loads(message)
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                child(order, namespace, plan, fds[0], fds[1])
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        control.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        ended = (
            {"exit": os.WEXITSTATUS(status)}
            if os.WIFEXITED(status)
            else {"signal": os.WTERMSIG(status)}
        )
        control.sendall(json.dumps(ended).encode() + b"\n")


# --- the child: locking itself in ----------------------------------------------------------------------


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _isolate(scratch: str, keep: tuple[int, ...]) -> None:
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(
        os.path.join(scratch, "output.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
    )
    os.dup2(out, 1)
    os.dup2(out, 2)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    os.chdir(scratch)
    os.environ.update(HOME=scratch, TMPDIR=scratch, TMP=scratch, TEMP=scratch)


def _limit(limits: dict) -> None:
    def cap(which, value):
        soft, hard = resource.getrlimit(which)
        value = int(value)
        hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
        resource.setrlimit(which, (min(value, hard), hard))

    cap(resource.RLIMIT_AS, _vm_size() + limits["memory_bytes"])
    cpu = int(limits["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # then SIGKILL
    cap(resource.RLIMIT_FSIZE, limits["file_bytes"])
    cap(resource.RLIMIT_NOFILE, 64)
    cap(resource.RLIMIT_CORE, 0)


def _drop_capabilities() -> str:
    """Root keeps its user id (the Python installation may live in /root) but loses every capability:
    with Landlock in force, it then reads and writes what a plain user could, and less."""
    if os.getuid() != 0:
        return "own user"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
        data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (x2): all empty
        for cap in range(64):  # the bounding set too, so that nothing can regain one
            libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
        if libc.capset(header, data) != 0:
            return "root (capabilities kept: capset refused)"
    except (OSError, AttributeError):
        return "root (capabilities kept: no C library)"
    return "root without capabilities"


def _drop_privileges(scratch: str, limits: dict) -> str:
    """Without Landlock, a grader running as root runs the child as ``nobody``."""
    if os.getuid() != 0:
        return "own user"
    for folder, _, files in os.walk(scratch):
        os.chown(folder, NOBODY, NOBODY)
        for name in files:
            os.chown(os.path.join(folder, name), NOBODY, NOBODY)
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
    return "nobody"


# Landlock (linux/landlock.h)
_FS_READ = (1 << 0) | (1 << 2) | (1 << 3)  # EXECUTE, READ_FILE, READ_DIR
_FS_ALL_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_ALL = (1 << 0) | (1 << 1)  # BIND_TCP, CONNECT_TCP (ABI 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)  # ABSTRACT_UNIX_SOCKET, SIGNAL (ABI 6)
_FILE_ONLY = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none), without restricting anything."""
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
        syscall.restype = ctypes.c_long
        return max(int(syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))), 0)
    except (OSError, AttributeError):
        return 0


def _landlock(read: list[str], write: list[str], files: list[str]) -> str:
    """Restrict this process (and any it could start) with Landlock; returns what was applied."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
        syscall.restype = ctypes.c_long
        abi = syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return "no Landlock (no C library)"
    if abi < 1:
        return "no Landlock in this kernel"
    fs_all = _FS_ALL_ABI[max(k for k in _FS_ALL_ABI if k <= abi)]
    net = _NET_ALL if abi >= 4 else 0
    scoped = _SCOPE_ALL if abi >= 6 else 0

    class Ruleset(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    attr = Ruleset(fs_all, net, scoped)
    ruleset = syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"no Landlock (create_ruleset: {os.strerror(ctypes.get_errno())})"

    def allow(path: str, access: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            rule = PathBeneath(access, fd)
            syscall(445, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0))
        finally:
            os.close(fd)

    for path in read:
        allow(path, _FS_READ & fs_all)
    for path in write:
        allow(path, fs_all)
    for path in files:
        allow(path, (_FS_READ | (1 << 1) | (1 << 14)) & fs_all & _FILE_ONLY)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return "no Landlock (no_new_privs refused)"
    if syscall(446, ruleset, ctypes.c_uint32(0)) != 0:
        return f"no Landlock (restrict_self: {os.strerror(ctypes.get_errno())})"
    os.close(ruleset)
    return f"Landlock ABI {abi}"


_WRITE_EVENTS = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.chflags": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (1,),
}
_LIST_EVENTS = {"os.listdir", "os.scandir", "glob.glob", "os.walk"}
_REFUSED = {
    "socket": "open a network socket",
    "subprocess": "start a program",
    "os.system": "start a program",
    "os.exec": "start a program",
    "os.spawn": "start a program",
    "os.posix_spawn": "start a program",
    "os.fork": "start a new process (fork)",
    "os.forkpty": "start a new process (fork)",
    "os.kill": "send a signal to a process",
    "os.killpg": "send a signal to a process",
    "signal.pthread_kill": "send a signal to a process",
    "ctypes": "call C functions directly (ctypes)",
    "resource.setrlimit": "change the sandbox's resource limits",
    "resource.prlimit": "change the sandbox's resource limits",
    "sqlite3": "open a database",
    "os.startfile": "start a program",
    "pty.spawn": "start a program",
    "webbrowser.open": "open a web browser",
    "urllib.Request": "reach the network",
    "ftplib": "reach the network",
    "http.client": "reach the network",
    "smtplib": "reach the network",
}


# Long by design: one closure, so that the hook holds every name it needs before student code runs.
def _install_audit_hook(scratch: str, private: list[str], report: int) -> None:
    real, join, isabs, getcwd = os.path.realpath, os.path.join, os.path.isabs, os.getcwd
    fspath, exit_now, my_pid, sep = os.fspath, os._exit, os.getpid(), os.sep
    flags_write = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    scratch = real(scratch)
    private = [real(p) for p in private]
    busy = [False]
    frame_of = sys._getframe

    def importing() -> str | None:
        """The outermost module being imported (the answer's own import statement), if any."""
        frame, found = frame_of(1), None
        while frame is not None:
            if frame.f_code.co_name == "_find_and_load":
                name = frame.f_locals.get("name")
                found = name if isinstance(name, str) else found
            frame = frame.f_back
        return found

    def resolve(path) -> str | None:
        if isinstance(path, int):
            return None  # a descriptor already open (this process's own)
        try:
            path = fspath(path)
            if isinstance(path, bytes):
                path = path.decode("utf-8", "surrogateescape")
            return real(path if isabs(path) else join(getcwd(), path))
        except BaseException:
            return "?"

    def inside(path: str, folder: str) -> bool:
        return path == folder or path.startswith(folder + os.sep)

    def stop(reason: str) -> None:
        try:
            send(report, b"J", json.dumps({"violation": reason}).encode())
        finally:
            exit_now(VIOLATION_EXIT)

    def shown(
        path: str, folder: str
    ) -> str:  # the student sees no absolute path of the instructor's
        return folder.rsplit(sep, 1)[-1] + path[len(folder) :]  # string operations only

    def check_read(path: str | None, what: str) -> None:
        if path is None:
            return
        for p in private:
            if inside(path, p):
                stop(
                    f"{what} {shown(path, p)}, among the instructor's files (the course's folder, the "
                    "grader's cases and references, the submissions)"
                )
        parts = path.split(os.sep)
        if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and int(parts[2]) != my_pid:
            stop(f"{what} {path}, another process's memory or files")

    def check_write(path: str | None, what: str) -> None:
        if path is None or path == os.devnull or inside(path, scratch):
            return
        stop(f"{what} {path}, outside its scratch folder")

    def hook(event: str, args: tuple) -> None:
        if busy[0]:
            return
        busy[0] = True
        try:
            if event == "open":
                path, mode, flags = (tuple(args) + (None, None, None))[:3]
                where = resolve(path)
                writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & flags_write
                )
                if writing:
                    check_write(where, "write to")
                check_read(where, "read")
                return
            if event in _WRITE_EVENTS:
                for i in _WRITE_EVENTS[event]:
                    if i < len(args):
                        where = resolve(args[i])
                        check_write(where, f"change ({event})")
                        check_read(where, f"change ({event})")
                return
            if event in _LIST_EVENTS and args:
                check_read(resolve(args[0]), "list")
                return
            if event == "os.chdir" and args:
                check_read(resolve(args[0]), "enter")
                return
            for prefix, reason in _REFUSED.items():
                if event == prefix or event.startswith(prefix + ".") or event.startswith(prefix):
                    if prefix == "socket" and event in ("socket.getdefaulttimeout",):
                        return
                    module = importing()
                    if module:  # a library doing it as it loads (lecturer review s17, M1)
                        stop(
                            f"{reason} ({event}) as the import of {module} was loading it (a "
                            "library that does so on import; take out an import your answer "
                            "does not use)"
                        )
                    stop(f"{reason} ({event})")
        finally:
            busy[0] = False

    sys.addaudithook(hook)


# --- the child: running the student's answer -----------------------------------------------------------


class _Refused(BaseException):
    """Raised in a student's function that called a library function the exercise forbids."""

    def __init__(self, index: int):
        self.index = index


_CALLING = [False]  # True while the grader's call of a student's function runs


# the ids of the functions swapped already (a pattern's modules are looked at again)
_GUARDED: set[int] = set()


def _targets(target: str) -> list[tuple[str, object]]:
    """(full name, object) of each function a refusal's target names: one ("lib.rope.apply_rope", a
    class's method "lib.llama.RMSNorm.forward": a refused method refuses every instance of the class),
    or for a pattern ("transformers.models.*.modeling_*.repeat_kv": every checkpoint's copy of a
    function) those of the modules imported so far that match it, the student's cells' imports
    included; none for a name this version of a library lacks. Found by the notebook's own resolver
    (``lib.exercises._refusal_targets``), so the notebook and the grader refuse the same functions; the
    full name is the holder's (its module, or its class's module and name) and the key; a static or
    class method is its function (``lib.flash.FlashAttention.backward``: its code is swapped)."""
    from lib.exercises import _refusal_targets

    found = []
    for holder, key, value in _refusal_targets(target):
        where = (
            f"{holder.__module__}.{holder.__qualname__}"
            if isinstance(holder, type)
            else holder.__name__
        )
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        found.append((f"{where}.{key}", value))
    return found


def _checkers_own_call(function: types.FunctionType, caller) -> bool:
    """Whether ``caller`` (the frame that called ``function``, past its stub) is code of a checker
    module (``lib.exercises.chNN``) calling a helper of its own: chapter 18's tracking tensor calls
    ``_leaves`` whenever the student's function touches x (lecturer review s22, B1: every answer got
    0). The frame must be the module's code from its file, not a student's code run in its namespace."""
    scope = function.__globals__
    return (
        str(scope.get("__name__", "")).startswith(("lib.exercises.", "_course_grading_"))
        and caller is not None
        and caller.f_globals is scope
        and caller.f_code.co_filename == scope.get("__file__")
        and function.__code__.co_filename == scope.get("__file__")
    )


def _guard(namespace: dict, refusals: list[dict]) -> None:
    """Make each forbidden library function refuse (every reference to it: its code is swapped; a
    built-in function, such as ``torch.rms_norm``, is replaced in its module). Run again before each
    call of a student's function, for the patterns' modules imported since (lecturer review s15, S3:
    transformers' own ``repeat_kv``)."""
    import inspect

    if refusals:
        _guard_escapes()
    for i, refusal in enumerate(refusals):
        for full_name, function in _targets(refusal["target"]):
            if id(function) in _GUARDED:
                continue
            if isinstance(function, types.BuiltinFunctionType):
                _guard_builtin(full_name, function, i, refusal["when"])
                continue
            if not isinstance(function, types.FunctionType) or function.__code__.co_freevars:
                continue  # not a plain function: its code cannot be swapped (a wrapper, a closure)
            _GUARDED.add(id(function))
            name = full_name.rpartition(".")[2]
            original = types.FunctionType(
                function.__code__,
                function.__globals__,
                function.__name__,
                function.__defaults__,
                function.__closure__,
            )
            original.__kwdefaults__ = function.__kwdefaults__
            signature = inspect.signature(function)

            def guard(
                *args, _i=i, _original=original, _signature=signature, _when=refusal["when"], **kw
            ):
                if not _CALLING[0]:  # the cells may call it; the function under test may not
                    return _original(*args, **kw)
                if _checkers_own_call(_original, sys._getframe(2)):
                    return _original(*args, **kw)
                if _when == "always":
                    raise _Refused(_i)
                bound = _signature.bind(*args, **kw)
                if bound.arguments.get(_when) is not None:
                    raise _Refused(_i)
                return _original(*args, **kw)

            guards = function.__globals__.setdefault("__sandbox_guards__", {})
            guards[full_name] = guard  # the full name: two modules may have the same name
            stub = {}
            exec(
                f"def {name}(*args, **kwargs):\n    return __sandbox_guards__[{full_name!r}](*args, **kwargs)\n",
                function.__globals__,
                stub,
            )
            function.__code__ = stub[name].__code__
            function.__defaults__ = function.__kwdefaults__ = None


# What switches torch function modes off, and with them the refusal mode (the assignment of fixer
# course37: ``with torch._C.DisableTorchFunction(): torch._C._VariableFunctions.rms_norm(...)``, or
# the mode popped from its stack, called the refused op unrefused). Each is refused when the student's
# own code (an answer cell) calls it while the grader calls the student's function; torch's own code
# uses them on every function a mode handles, and may.
_ESCAPES = (
    ("torch._C", "DisableTorchFunction"),
    ("torch._C", "_pop_torch_function_stack"),
    ("torch._C", "_get_function_stack_at"),
    ("torch.overrides", "_pop_mode"),
    ("torch.overrides", "_pop_mode_temporarily"),
    ("torch.overrides", "_get_current_function_mode_stack"),
)
ESCAPE_MESSAGE = (
    "your answer switched off torch function modes ({name}), with which the grader refuses what the "
    "exercise forbids; a solution needs no such thing"
)


class RefusedEscape(RuntimeError):
    """The student's code switched off (or took off its stack) the grader's torch function mode."""


def _guard_escapes() -> None:
    """Each of ``_ESCAPES``, under every name a torch module holds it by, replaced by a function that
    refuses a call from an answer cell while the student's function is called."""
    import importlib

    for module_name, name in _ESCAPES:
        try:
            original = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError):
            continue  # not in this version of torch
        if id(original) in _GUARDED:
            continue

        def guard(*args, _original=original, _name=f"{module_name}.{name}", **kwargs):
            if _CALLING[0] and sys._getframe(1).f_code.co_filename.startswith("<answer"):
                raise RefusedEscape(ESCAPE_MESSAGE.format(name=_name))
            return _original(*args, **kwargs)

        _GUARDED.update((id(original), id(guard)))
        for module in list(sys.modules.values()):  # the re-exports too (torch.overrides's imports)
            if getattr(module, "__name__", "").startswith("torch") and any(
                value is original for value in list(vars(module).values())
            ):
                for key, value in list(vars(module).items()):
                    if value is original:
                        setattr(module, key, guard)


def _guard_builtin(full_name: str, function, i: int, when: str) -> None:
    """A built-in function's refusal: its module's attribute replaced by a function that refuses while
    a student's function is called (any call: a built-in has no signature to bind)."""
    module_name, _, name = full_name.rpartition(".")
    module = sys.modules.get(module_name)
    if module is None or getattr(module, name, None) is not function:
        return
    if module_name == "torch" or module_name.startswith("torch."):
        _REFUSED_OPS.setdefault(name, i)  # the op however it is reached (lecturer review s17, S1)
        _REFUSED_OPS.setdefault(function.__name__, i)  # torch.special.logsumexp: special_logsumexp

    def guard(*args, **kwargs):
        if _CALLING[0]:
            raise _Refused(i)
        return function(*args, **kwargs)

    _GUARDED.add(id(function))
    _GUARDED.add(id(guard))
    setattr(module, name, guard)


_REFUSED_OPS: dict[str, int] = {}  # a refused torch built-in's op name -> the refusal's index


def _refused_op(func) -> int | None:
    """The refusal a torch function reached by any spelling falls under: the built-in
    (``torch.rms_norm``, ``torch._C._VariableFunctions.rms_norm``, an alias kept from before the
    guard) or the dispatcher's op (``torch.ops.aten.rms_norm``, ``.default``, any overload)."""
    name = getattr(func, "_qualified_op_name", None)  # torch.ops.aten.X / X.overload
    if name is None and hasattr(func, "overloadpacket"):
        name = func.overloadpacket._qualified_op_name
    if name is not None:
        namespace, _, name = name.partition("::")
        return _REFUSED_OPS.get(name) if namespace == "aten" else None
    if isinstance(func, types.BuiltinFunctionType):
        return _REFUSED_OPS.get(getattr(func, "__name__", ""))
    if isinstance(func, types.MethodDescriptorType) and getattr(func, "__objclass__", None) in (
        getattr(sys.modules.get("torch._C"), "TensorBase", None),
    ):  # the tensor's method of a refused op: x.logsumexp(0) (lecturer review s24, S2)
        return _REFUSED_OPS.get(func.__name__)
    return None


def _refusal_mode():
    """A torch function mode, active while the student's function is called, that refuses a refused
    built-in's op however it is spelled: an attribute swap guards one name only (lecturer review s17,
    S1: ``torch.ops.aten.rms_norm`` and ``torch._C._VariableFunctions.rms_norm`` got full points)."""
    from torch.overrides import TorchFunctionMode

    class Refusing(TorchFunctionMode):
        def __torch_function__(self, func, types=(), args=(), kwargs=None):
            index = _refused_op(func)
            if index is not None:
                raise _Refused(index)
            return func(*args, **(kwargs or {}))

    return Refusing()


class _calling:
    """While the grader calls a student's function: guarded functions refuse (``_CALLING``) and a
    refused torch op refuses under any name (``_refusal_mode``)."""

    def __enter__(self):
        self.mode = _refusal_mode() if _REFUSED_OPS else None
        if self.mode is not None:
            self.mode.__enter__()
        _CALLING[0] = True
        return self

    def __exit__(self, *exc):
        _CALLING[0] = False
        if self.mode is not None:
            import torch

            stack = torch._C._len_torch_function_stack()
            on_top = stack and torch._C._get_function_stack_at(stack - 1) is self.mode
            try:
                self.mode.__exit__(*exc)
            except BaseException:  # noqa: BLE001 (the student's code popped the mode itself)
                pass
            if not on_top and exc[0] is None:  # taken off its stack by another way (its __exit__)
                raise RefusedEscape(ESCAPE_MESSAGE.format(name="the mode taken off its stack"))
        return False


def _error(e: BaseException) -> dict:
    frames = [
        [f.filename, f.lineno, f.line or ""]
        for f in traceback.extract_tb(e.__traceback__)
        if f.filename.startswith("<answer ")
    ]
    try:
        message = str(e)[:2000]
    except BaseException:
        message = ""
    kind = type(e)
    return {
        "type": kind.__name__,
        "builtin": getattr(builtins, kind.__name__, None) is kind,
        "message": message,
        "frames": frames,
    }


def _names_used(code) -> list[str]:
    names, todo = set(), [code]
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                todo.append(const)
            elif isinstance(const, tuple):
                names.update(x for x in const if isinstance(x, str))
    return sorted(names)


def _is_stub(code) -> bool:
    import dis

    steps = [
        (i.opname, i.argval)
        for i in dis.get_instructions(code)
        if i.opname not in ("RESUME", "NOP", "CACHE", "EXTENDED_ARG")
    ]
    return steps in ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


def _load_changed(module, state) -> None:
    """Copy into a module of the student's the weights the grader changed in its copy (``state``:
    {parameter name: tensor}), before its forward runs: the checker's changes reach the layers that
    run (lecturer review s23, S1)."""
    import torch

    if not state or not isinstance(module, torch.nn.Module) or not isinstance(state, dict):
        return
    mine = dict(torch.nn.Module.named_parameters(module))
    with torch.no_grad():
        for name, value in state.items():
            target = mine.get(name)
            if isinstance(value, torch.Tensor) and isinstance(target, torch.Tensor):
                if target.shape == value.shape:
                    target.copy_(value)


def _describe(value, functions: list, namespace: dict):
    """What the grader receives for one argument of the checker."""
    import torch

    if callable(value) and not isinstance(value, (type, torch.nn.Module, torch.Tensor)):
        module = getattr(value, "__module__", "") or ""
        name = getattr(value, "__qualname__", "")
        if (
            module.startswith("lib.")
            and not module.startswith("lib.exercises")
            and getattr(sys.modules.get(module), name, None) is value
        ):
            return {"library": f"{module}.{name}"}
        functions.append(value)
        code = getattr(value, "__code__", None)
        info = {"function": len(functions) - 1, "name": getattr(value, "__name__", "function")}
        if isinstance(code, types.CodeType):
            names = _names_used(code)
            space = getattr(value, "__globals__", {})
            info.update(
                filename=code.co_filename,
                firstlineno=code.co_firstlineno,
                names=names,
                stub=_is_stub(code),
                globals={
                    n: encode(space[n])
                    for n in names
                    if n in space
                    and (
                        isinstance(space[n], torch.Tensor)
                        or (isinstance(space[n], (int, float)) and not isinstance(space[n], bool))
                    )
                },
            )
        return info
    return {"data": encode(value)}


def _state_of(value):
    """What a checker's argument noted while the student's function ran, as data for the grader
    (its class's ``__sandbox_state__``: chapter 18's scores note the positions each operation read,
    lecturer review s22, B1); None for any other argument."""
    state = getattr(type(value), "__sandbox_state__", None)
    return encode(state(value)) if callable(state) else None


def _restore(saved: dict) -> None:
    """Python's builtins as they were before the student's code ran (the harness uses them)."""
    space = vars(builtins)
    for name in [n for n in space if n not in saved]:
        del space[name]
    space.update(saved)


# Long by design: the child's steps in the order that keeps it safe (lock in, then run requests).
def child(order: dict, namespace: dict, plan: dict, requests: int, replies: int) -> None:
    scratch = order["scratch"]
    limits = order["limits"]
    os.environ.update(limits.get("environment", {}))  # the student's id (per-student variants)
    _isolate(scratch, (requests, replies))
    _limit(limits)
    landlock = _landlock(plan["read"], [scratch], [os.devnull])
    user = (
        _drop_capabilities()
        if landlock.startswith("Landlock")
        else _drop_privileges(scratch, limits)
    )
    _install_audit_hook(scratch, plan["private"], replies)
    import torch

    send(replies, b"J", json.dumps({"sandbox": {"user": user, "landlock": landlock}}).encode())
    functions = _REMOTE
    saved_builtins = dict(vars(builtins))
    guarded, refusals = False, []
    while True:
        try:
            request = decode(receive(requests))
        except EOFError:
            os._exit(0)
        if request["op"] == "cell":
            if not guarded:
                refusals = request.get("refusals", [])
                _guard(namespace, refusals)
                guarded = True
            cell, crash = request["cell"], None
            try:
                exec(compile(transform(cell["source"]), cell["filename"], "exec"), namespace)
            except _Refused as e:
                crash = {"refused": e.index, "frames": _error(e)["frames"]}
            except BaseException as e:  # noqa: BLE001
                crash = _error(e)
            _restore(saved_builtins)  # what the harness itself uses
            send_data(replies, {"crash": crash if cell["student"] else None})
        elif request["op"] == "args":
            _restore(saved_builtins)
            arguments = []
            for expression in request["args"]:
                try:
                    value = eval(expression, namespace)
                    arguments.append(_describe(value, functions, namespace))
                except BaseException as e:  # noqa: BLE001
                    arguments.append({"missing": _error(e)})
            send_data(replies, {"args": arguments})
        elif request["op"] == "call":
            function = functions[request["fn"]]
            _guard(namespace, refusals)  # a pattern's modules that the cells imported
            args = request["args"]
            try:
                _load_changed(function, request.get("state"))
                try:
                    with _calling(), torch.set_grad_enabled(bool(request.get("grad", False))):
                        result = function(*args)
                finally:
                    _CALLING[0] = False
                    _restore(saved_builtins)
                reply = {
                    "result": encode(result),
                    "inputs": [encode(a) if isinstance(a, torch.Tensor) else None for a in args],
                    "states": [_state_of(a) for a in args],
                }
            except _Refused as e:
                reply = {"refused": e.index}
            except BaseException as e:  # noqa: BLE001
                reply = {"error": _error(e)}
            try:
                send_data(replies, reply)
            except BaseException as e:  # noqa: BLE001 (an object that cannot be written)
                send_data(replies, {"error": _error(e), "unreadable": True})


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    zygote(sys.argv[1], int(sys.argv[2]))
