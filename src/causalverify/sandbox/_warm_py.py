"""The warm interpreter: runs inside a long-lived bubblewrap sandbox and forks one process per cell.

It imports the heavy packages once, then waits for requests from the harness on a Unix socket.
Each request forks a *keeper* that enters fresh mount, PID, network, IPC, UTS and cgroup
namespaces (and, when the harness is not root, a fresh user namespace) and forks the cell: PID 1
of its namespace, exactly like a cold run under ``bwrap --as-pid-1``. Before the cell's first line runs,
it gets a fresh tmpfs at ``/scratch``, ``/tmp`` and ``/code`` (the latter read-only once the script
and hooks are in), a fresh ``/proc`` and ``/dev/pts``, loopback up, its own uid with no
capabilities and ``no_new_privs``, the system-call filter, the resource limits and the cleared
environment of a cold run. Every descriptor but stdin, stdout, stderr and the fit log is closed,
so the cell can reach neither this process nor any other cell.

All of that world is read from the configuration the harness rendered from its ``CellSpec``
(``causalverify.sandbox.spec.warm_config``, read back by :class:`_Config` under the spec's field
names), the same values a cold run's bubblewrap arguments are rendered from.

The keeper hands the harness a pidfd of the cell (killing it kills its whole namespace) and, when
the cell has exited, its wait status and resource usage. This file runs inside the sandbox, never
in the harness: it imports only the standard library until the preload list.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import errno
import fcntl
import gc
import io
import json
import os
import resource
import signal
import socket
import struct
import sys
import types
from typing import Any

# namespace flags
_NEWCGROUP = 0x02000000
_NEWNS, _NEWUTS, _NEWIPC, _NEWUSER, _NEWPID, _NEWNET = (
    0x00020000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)
# mount flags
_RDONLY, _NOSUID, _NODEV, _NOEXEC, _REMOUNT, _BIND, _REC, _PRIVATE = (
    1,
    2,
    4,
    8,
    32,
    4096,
    16384,
    1 << 18,
)
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS = 1, 4, 38
_PR_SET_SECCOMP, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 22, 24, 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_SECCOMP_MODE_FILTER = 2
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_MAX_FDS = 250
_SYS_PIDFD_OPEN = 434

#: the interpreter's own streams and arguments as a cold start made them (same environment)
_STREAM_SETTINGS = {
    name: (getattr(sys, name).encoding, getattr(sys, name).errors)
    for name in ("stdin", "stdout", "stderr")
}
_INTERPRETER_ARGS = list(sys.orig_argv[: len(sys.orig_argv) - len(sys.argv)])

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_void_p]
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_void_p,
    ctypes.c_ulong,
    ctypes.c_ulong,
]
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(
    source: str | None, target: str | None, fstype: str | None, flags: int, data: str | None = None
) -> None:
    enc = [None if v is None else v.encode() for v in (source, target, fstype)]
    raw = None if data is None else ctypes.cast(ctypes.c_char_p(data.encode()), ctypes.c_void_p)
    _check(_libc.mount(enc[0], enc[1], enc[2], flags, raw), f"mount {target}")


def _prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, None, 0, 0), f"prctl {option}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def _pidfd_open(pid: int) -> int:
    fd = _libc.syscall(_SYS_PIDFD_OPEN, pid, 0)
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"pidfd_open: {os.strerror(err)}")
    return int(fd)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _install_seccomp(program: bytes) -> None:
    prog = _SockFprog(len(program) // 8, program)
    ptr = ctypes.cast(ctypes.pointer(prog), ctypes.c_void_p).value or 0
    _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ptr, 0, 0), "seccomp")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


def _write_file(path: str, data: bytes | int, mode: int) -> None:
    """Create ``path`` with exactly ``mode`` holding ``data`` (bytes, or a descriptor to copy)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        if isinstance(data, int):
            size = os.fstat(data).st_size
            offset = 0
            while offset < size:
                sent = os.sendfile(fd, data, offset, size - offset)
                if sent == 0:
                    break
                offset += sent
        else:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


#: the namespaces a keeper makes for its cell, by the spec's names (mount is always new)
_NAMESPACE_FLAGS = {
    "net": _NEWNET,
    "pid": _NEWPID,
    "ipc": _NEWIPC,
    "cgroup": _NEWCGROUP,
    "uts": _NEWUTS,
}


class _Config:
    """The cells' world, as ``causalverify.sandbox.spec.warm_config`` rendered it: the fields
    of the harness's ``CellSpec`` under the same names (and the keeper's own settings)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.uid_policy = str(raw["uid_policy"])
        self.uid = int(raw["uid"])
        self.namespaces = tuple(str(ns) for ns in raw["namespaces"])
        self.hostname = str(raw["hostname"])
        self.new_session = bool(raw["new_session"])
        self.die_with_parent = bool(raw["die_with_parent"])
        self.environment = tuple((str(k), str(v)) for k, v in raw["environment"])
        self.seccomp = bytes.fromhex(raw["seccomp"]) if raw.get("seccomp") else None
        self.workdir = str(raw["workdir"])
        self.tmpfs_bytes = int(raw["tmpfs_bytes"])
        self.scratch_mode = int(raw["scratch_mode"])
        self.tmp_mode = int(raw["tmp_mode"])
        self.data_mode = int(raw["data_mode"])
        self.code_dir = str(raw["code_dir"])
        self.code_mode = int(raw["code_mode"])
        self.hooks = tuple((str(name), str(text).encode()) for name, text in raw["hooks"])
        fd = raw.get("fitlog_fd")
        self.fitlog_fd: int | None = int(fd) if fd is not None else None
        self.preload: list[str] = list(raw["preload"])
        unknown = set(self.namespaces) - set(_NAMESPACE_FLAGS)
        if unknown:
            raise ValueError(f"unknown namespaces {sorted(unknown)}")

    @property
    def as_root(self) -> bool:
        return self.uid_policy == "slot"

    @property
    def script(self) -> str:
        return f"{self.code_dir}/main.py"

    @property
    def hook_dir(self) -> str:
        return f"{self.code_dir}/hooks"

    @property
    def flags(self) -> int:
        """The ``unshare`` flags of a cell (the user namespace is made first, on its own)."""
        flags = _NEWNS
        for ns in self.namespaces:
            flags |= _NAMESPACE_FLAGS[ns]
        return flags


# ---------------------------------------------------------------------------------------------
# inside the cell (PID 1 of its namespaces)


def _fresh_mounts(cfg: _Config, files: list[tuple[str, int]], code: int) -> None:
    _mount(None, "/", None, _REC | _PRIVATE)
    size = f"size={cfg.tmpfs_bytes}"
    _mount("proc", "/proc", "proc", _NOSUID | _NODEV | _NOEXEC)
    _mount("devpts", "/dev/pts", "devpts", _NOSUID | _NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    _mount("tmpfs", "/tmp", "tmpfs", _NOSUID | _NODEV, f"mode={cfg.tmp_mode:04o},{size}")
    _mount("tmpfs", cfg.workdir, "tmpfs", _NOSUID | _NODEV, f"mode={cfg.scratch_mode:04o},{size}")
    _mount("tmpfs", cfg.code_dir, "tmpfs", _NOSUID | _NODEV, "mode=0755,size=67108864")
    old = os.umask(0)
    try:
        for rel, fd in files:
            parts = rel.split("/")
            for i in range(1, len(parts)):
                folder = f"{cfg.workdir}/" + "/".join(parts[:i])
                if not os.path.isdir(folder):
                    os.mkdir(folder, cfg.scratch_mode)
            _write_file(f"{cfg.workdir}/{rel}", fd, cfg.data_mode)
        # in bwrap's order: a cold run's listing of /code is the same
        _write_file(cfg.script, code, cfg.code_mode)
        if cfg.hooks:
            os.mkdir(cfg.hook_dir, 0o755)
            for name, content in cfg.hooks:
                _write_file(f"{cfg.hook_dir}/{name}", content, cfg.code_mode)
    finally:
        os.umask(old)
    _mount(None, cfg.code_dir, None, _REMOUNT | _RDONLY | _NOSUID | _NODEV)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_privileges(cfg: _Config, uid: int) -> None:
    """Become ``uid`` with no capability of any kind, for good (checked, not assumed)."""
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, None, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL:
                break  # past the last capability this kernel knows
            _check(-1, f"dropping capability {cap} from the bounding set")
    _check(_libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, None, 0, 0), "ambient caps")
    if cfg.as_root:
        os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # switching away from uid 0 clears the capabilities; in a user namespace of its own the
    # cell already has its uid, so they are cleared explicitly
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    _check(_libc.capset(ctypes.byref(header), (_CapData * 2)()), "capset")
    with open("/proc/self/status") as fh:
        status = fh.read()
    for line in status.splitlines():
        if line.startswith(("CapInh:", "CapEff:", "CapPrm:", "CapAmb:", "CapBnd:")) and int(
            line.split()[1], 16
        ):
            raise OSError(f"a capability survived: {line}")
    # changing uid made the process undumpable (its /proc files root's); a cold run's exec
    # makes it dumpable again, so its /proc/self/environ and the like stay readable to it
    _prctl(_PR_SET_DUMPABLE, 1)
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0), "no_new_privs")


def _set_limits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))


def _cell(cfg: _Config, req: dict[str, Any], fds: list[int], setup_w: int) -> None:
    """Prepare the cell's world, then run the script as ``python -B /code/main.py`` would."""
    try:
        if cfg.new_session:
            os.setsid()
        if cfg.die_with_parent:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if "uts" in cfg.namespaces:
            socket.sethostname(cfg.hostname)
        if "net" in cfg.namespaces:
            _loopback_up()
        out_fd, err_fd, _ctl, code_fd, *rest = fds
        log_fd = rest.pop(0) if req["log"] else -1
        file_fds = rest
        files = list(zip(req["files"], file_fds, strict=True))
        _fresh_mounts(cfg, files, code_fd)
        uid = int(req["uid"]) if cfg.as_root else cfg.uid
        imports = req.get("imports")
        null = os.open("/dev/null", os.O_RDONLY)
        keep = {0: null, 1: out_fd, 2: err_fd}
        if log_fd >= 0 and cfg.fitlog_fd is not None:
            keep[int(cfg.fitlog_fd)] = log_fd
        moved = {src: os.dup(src) for src in set(keep.values())}
        for target, src in keep.items():
            os.dup2(moved[src], target, inheritable=True)
        os.set_blocking(1, True)
        os.set_blocking(2, True)
        rlimits = dict(req["rlimits"])
        if "RLIMIT_AS" in rlimits:
            rlimits["RLIMIT_AS"] += _address_space_credit(imports)
        _set_limits(rlimits)
        os.chdir(cfg.workdir)
        _drop_privileges(cfg, uid)
        if cfg.seccomp is not None:
            _install_seccomp(cfg.seccomp)
        os.umask(0o022)
        # what a fresh interpreter has: its own entropy, environment, arguments and streams
        os.environ.clear()
        os.environ.update(cfg.environment)
        os.environ["PWD"] = cfg.workdir  # as bwrap's --chdir sets it
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except BaseException as exc:
        os.write(setup_w, f"{type(exc).__name__}: {exc}".encode()[:4000])
        os._exit(127)
    log_target = max(keep)
    if log_target > 2:
        os.closerange(3, log_target)
        os.closerange(log_target + 1, 1 << 20)
    else:
        os.closerange(3, 1 << 20)
    os._exit(_run_script(cfg.script))


def _reseed() -> None:
    import random
    import warnings

    # warnings shown while preloading must show again in the cell, as in a cold run
    warnings._filters_mutated()  # type: ignore[attr-defined]

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _fresh_streams() -> None:
    """Streams as a cold interpreter opens them: its encodings and error handlers."""

    def stream(fd: int, name: str, **kwargs: Any) -> io.TextIOWrapper:
        encoding, errors = _STREAM_SETTINGS[name]
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, **kwargs)

    sys.stdin = stream(0, "stdin")
    sys.stdout = stream(1, "stdout")
    sys.stderr = stream(2, "stderr", line_buffering=True)
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, f"__{name}__", getattr(sys, name))


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(Exception):
        print(code, file=sys.stderr)
    return 1


def _finish() -> None:
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        with contextlib.suppress(BaseException):
            shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()


def _run_script(path: str) -> int:
    import atexit

    atexit._clear()  # the preloading process's handlers are not the cell's
    _fresh_streams()
    output_hook = sys.modules.get("causalverify_output")  # loaded by the fit-log hook
    if output_hook is not None:
        with contextlib.suppress(Exception):
            output_hook.install()  # notes the writes to the cell's own stdout
    _reseed()
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __builtins__=__builtins__, __cached__=None, __spec__=None)
    sys.modules["__main__"] = main
    sys.argv[:] = [path]
    sys.orig_argv = [*_INTERPRETER_ARGS, path]
    sys.path[0] = os.path.dirname(path)
    code = 0
    try:
        with open(path, "rb") as fh:
            source = fh.read()
        exec(compile(source, path, "exec", dont_inherit=True), main.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:
        tb = exc.__traceback__
        # the traceback starts at the script's own frame, as the interpreter prints it
        exc = exc.with_traceback(tb.tb_next if tb is not None else None)
        sys.excepthook(type(exc), exc, exc.__traceback__)
        code = 1
    try:
        _finish()
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        pass
    return code


# ---------------------------------------------------------------------------------------------
# the keeper: makes the namespaces, forks the cell, reports on it


def _send(sock: socket.socket, payload: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(payload).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendall(data)


def _user_namespace(cfg: _Config) -> None:
    outer_uid, outer_gid = os.getuid(), os.getgid()
    _unshare(_NEWUSER)
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{cfg.uid} {outer_uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{cfg.uid} {outer_gid} 1")


def _keeper(cfg: _Config, req: dict[str, Any], fds: list[int]) -> None:
    ctl = socket.socket(fileno=fds[2])
    try:
        if cfg.die_with_parent:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if not cfg.as_root:
            _user_namespace(cfg)
        _unshare(cfg.flags)
        setup_r, setup_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            os.close(setup_r)
            ctl.detach()  # closed with the others below; no object may close a reused number
            _cell(cfg, req, fds, setup_w)
        os.close(setup_w)
        for fd in fds:
            if fd != ctl.fileno():
                os.close(fd)
        pidfd = _pidfd_open(pid)
        _send(ctl, {"started": True}, [pidfd])
        os.close(pidfd)
        _, status, usage = os.wait4(pid, 0)
        setup_error = os.read(setup_r, 4096).decode("utf-8", "replace")
        report: dict[str, Any] = {
            "status": status,
            "cpu": usage.ru_utime + usage.ru_stime,
            "maxrss_kb": usage.ru_maxrss,
        }
        if setup_error:
            report["error"] = setup_error
        _send(ctl, report)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            _send(ctl, {"error": f"{type(exc).__name__}: {exc}"})
        os._exit(1)
    os._exit(0)


# ---------------------------------------------------------------------------------------------
# the server


def _receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    fds = array.array("i")
    data, ancdata, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(_MAX_FDS * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        for fd in fds:
            os.close(fd)
        return None
    return json.loads(data), list(fds)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


_ABSENT = object()


def _numpy() -> Any:
    numpy = sys.modules.get("numpy")
    return numpy if numpy is not None and hasattr(numpy, "geterr") else None


def _get_numpy(what: str) -> Any:
    numpy = _numpy()
    if numpy is None:
        return _ABSENT
    if what == "err":
        return numpy.geterr()
    if what == "errcall":
        return numpy.geterrcall()
    return numpy.get_printoptions()


def _set_numpy(what: str, value: Any) -> None:
    numpy = _numpy()
    if numpy is None or value is _ABSENT:
        return
    if what == "err":
        numpy.seterr(**value)
    elif what == "errcall":
        numpy.seterrcall(value)
    else:
        numpy.set_printoptions(**value)


def _signals() -> list[signal.Signals]:
    return sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP})


def _get_handlers() -> dict[int, Any]:
    return {int(s): signal.getsignal(s) for s in _signals()}


def _set_handlers(handlers: dict[int, Any]) -> None:
    for sig, handler in handlers.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)


def _set_attr(owner: Any, name: str) -> Any:
    return lambda value: setattr(owner, name, value)


def _state_items() -> dict[str, tuple[Any, Any]]:
    """Every piece of interpreter-wide state an import may change, as (get, set) pairs: hooks,
    limits, the module search path, the working folder, signal handlers, the garbage collector,
    the default socket timeout, the locale, numpy's error, error-callback and print settings.

    Like the warning filters a package adds for its own warnings, the import finders it adds for
    its own names (``six``'s, which pandas brings) stay: they answer only for that package."""
    import locale
    import threading
    import warnings

    items: dict[str, tuple[Any, Any]] = {}
    for name in ("formatwarning", "showwarning", "_showwarnmsg"):
        items[f"warnings.{name}"] = (
            lambda n=name: getattr(warnings, n, _ABSENT),
            lambda v, n=name: None if v is _ABSENT else setattr(warnings, n, v),
        )
    for name in ("excepthook", "displayhook", "unraisablehook", "breakpointhook"):
        items[f"sys.{name}"] = (lambda n=name: getattr(sys, n), _set_attr(sys, name))
    items["threading.excepthook"] = (
        lambda: threading.excepthook,
        _set_attr(threading, "excepthook"),
    )
    items["sys.path"] = (lambda: list(sys.path), lambda v: sys.path.__setitem__(slice(None), v))
    items["sys.recursionlimit"] = (sys.getrecursionlimit, sys.setrecursionlimit)
    items["sys.switchinterval"] = (sys.getswitchinterval, sys.setswitchinterval)
    items["sys.int_max_str_digits"] = (sys.get_int_max_str_digits, sys.set_int_max_str_digits)
    items["sys.trace"] = (sys.gettrace, sys.settrace)
    items["sys.profile"] = (sys.getprofile, sys.setprofile)
    items["cwd"] = (os.getcwd, os.chdir)
    items["signals"] = (_get_handlers, _set_handlers)
    items["gc.threshold"] = (gc.get_threshold, lambda v: gc.set_threshold(*v))
    items["gc.enabled"] = (gc.isenabled, lambda v: gc.enable() if v else gc.disable())
    items["socket.timeout"] = (socket.getdefaulttimeout, socket.setdefaulttimeout)
    items["locale"] = (
        lambda: locale.setlocale(locale.LC_ALL),
        lambda v: locale.setlocale(locale.LC_ALL, v),
    )
    for what in ("err", "errcall", "print"):
        items[f"numpy.{what}"] = (
            lambda w=what: _get_numpy(w),
            lambda v, w=what: _set_numpy(w, v),
        )
    return items


def _global_state() -> dict[str, Any]:
    """The values of :func:`_state_items`. The warning filters a package adds for its own
    warnings stay; the environment is the cell's own anyway (a cell starts with a cold run's
    environment, so a variable an import sets, like statsmodels' ``KMP_INIT_AT_FORK``, is not
    there)."""
    return {name: get() for name, (get, _set) in _state_items().items()}


def _changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What an import changed; the state of a module it loaded for the first time (numpy's
    settings when numpy was not loaded before) is that module's own, as in a cold run."""
    return sorted(k for k, v in before.items() if v is not _ABSENT and after.get(k) != v)


def _restore(state: dict[str, Any]) -> None:
    """Put back every value :func:`_global_state` saved."""
    items = _state_items()
    for name, value in state.items():
        with contextlib.suppress(Exception):
            items[name][1](value)


#: the standard library's modules: every cell has them, cold or warm
_STDLIB = frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names)


def _package(module: str) -> str:
    return module.split(".")[0]


class _Group:
    """What importing one preloaded name brought: its modules and the address space they
    mapped."""

    def __init__(self, name: str, modules: set[str], mapped: int) -> None:
        #: the top-level packages this import loaded first (its own, and those it brought)
        self.tops = {_package(name)} | {m for m in modules if "." not in m} - _STDLIB
        self.modules = modules
        self.mapped = mapped
        self.uses: set[str] = set()


#: the preloaded groups, in import order, and the address space mapped before any of them
_GROUPS: list[_Group] = []
_BARE_MAPPED = [0]


def _mapped() -> int:
    """This process's mapped address space in bytes (what ``RLIMIT_AS`` counts)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _preload(names: list[str]) -> list[str]:
    """Import ``names`` as a script would; the filters they install for their warnings stay.

    A module whose import changes interpreter-wide state (say, replaces
    ``warnings.formatwarning``) is unloaded again, so that a cell importing it gets that change
    exactly as a cold run does, and a cell that does not import it never sees it. What each
    import mapped is noted (:class:`_Group`), for the cells that import it.
    """
    import importlib

    _BARE_MAPPED[0] = _mapped()
    loaded = []
    for name in names:
        before_modules = set(sys.modules)
        before = _global_state()
        before_mapped = _mapped()
        try:
            importlib.import_module(name)
        except Exception:  # a missing package is simply not preloaded
            for added in set(sys.modules) - before_modules:
                del sys.modules[added]
            _restore(before)
            continue
        if _changed(before, _global_state()):
            for added in set(sys.modules) - before_modules:
                del sys.modules[added]
            _restore(before)
            continue
        modules = set(sys.modules) - before_modules
        _GROUPS.append(_Group(name, modules, max(0, _mapped() - before_mapped)))
        loaded.append(name)
    # which packages each group's modules use (a module object among their globals)
    for group in _GROUPS:
        for mod_name in group.modules:
            module = sys.modules.get(mod_name)
            for value in list(getattr(module, "__dict__", {}).values()):
                if isinstance(value, types.ModuleType):
                    group.uses.add(_package(value.__name__))
        group.uses -= _STDLIB | {"__main__"}
    return loaded


def _imported_groups(imports: list[str]) -> list[_Group]:
    """The preloaded groups a script importing the top-level packages ``imports`` would load
    in a cold run: those of the packages it names and, transitively, of the packages they use."""
    wanted = set(imports)
    chosen: list[_Group] = []
    changed = True
    while changed:
        changed = False
        for group in _GROUPS:
            if group not in chosen and group.tops & wanted:
                chosen.append(group)
                wanted |= group.uses
                changed = True
    return [g for g in _GROUPS if g in chosen]


def _address_space_credit(imports: list[str] | None) -> int:
    """How much more address space than the limit a warm cell may map, so that it can allocate
    exactly as much as a cold one: what the preloaded packages mapped, less what the packages
    the script imports map in a cold run too (all of it when the imports are unknown)."""
    if imports is None:
        return 0
    preloaded = max(0, _mapped() - _BARE_MAPPED[0])
    charged = sum(g.mapped for g in _imported_groups(imports))
    return max(0, preloaded - charged)


def main() -> None:
    server_fd, config_path = int(sys.argv[1]), sys.argv[2]
    with open(config_path) as fh:
        cfg = _Config(json.load(fh))
    sock = socket.socket(fileno=server_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    loaded = _preload(cfg.preload)
    import threading

    threads = threading.active_count()
    gc.collect()
    gc.freeze()
    sock.sendall(json.dumps({"ready": True, "preloaded": loaded, "threads": threads}).encode())
    sock.settimeout(1.0)
    while True:
        _reap()
        try:
            got = _receive(sock)
        except TimeoutError:
            continue
        if got is None:
            return
        req, fds = got
        pid = os.fork()
        if pid == 0:
            sock.close()
            _keeper(cfg, req, fds)
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    main()
