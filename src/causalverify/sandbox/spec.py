"""A cell's world, stated once: every protection of a sandboxed script as one frozen value.

:class:`CellSpec` says what a script sees and may do: its uid policy, namespaces, host name,
session, environment, system-call filter, mounts (the read-only system, the scratch folder and
``/tmp``, the data files, the script and the hooks), and resource limits. It is rendered twice,
from the same values:

- :func:`bwrap_world`, :func:`bwrap_cell` and :func:`script_user`: bubblewrap's arguments (and
  the ``setpriv`` prefix) of a cold cell; the limits, by :meth:`CellSpec.rlimits`, through
  ``prlimit`` while bwrap waits on ``--block-fd``;
- :func:`warm_config` and :func:`bwrap_keeper`: the warm keeper's configuration (read by
  :mod:`causalverify.sandbox._warm_py`, which builds every warm cell from it) and the
  arguments of the bubblewrap sandbox its interpreter runs in (the read-only system every warm
  cell inherits); the limits, by :meth:`CellSpec.rlimits`, in each cell's request.

A new protection is one field here, rendered by both. ``tests/test_sandbox_spec.py`` changes
every field in turn and fails when one of the two renderings does not change with it, and
parses each rendering back into the same spec.

What no field states, because both paths always do it: a new mount namespace whose skeleton is
read-only (:data:`SEAL`), a private ``/proc`` and ``/dev``, the script as PID 1 of its PID
namespace, no capabilities and ``no_new_privs``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from causalverify.families import Language
from causalverify.sandbox import fitlog
from causalverify.sandbox._toolchain import SANDBOX_R_LIBRARY, Toolchain
from causalverify.sandbox.base import Files, Limits

__all__ = [
    "CODE_DIR",
    "NAMESPACES",
    "SANDBOX_UID",
    "SCRATCH",
    "SEAL",
    "CellSpec",
    "Namespace",
    "UidPolicy",
    "bwrap_cell",
    "bwrap_hooks",
    "bwrap_keeper",
    "bwrap_world",
    "check_relative",
    "sandbox_env",
    "script_user",
    "warm_config",
]

SCRATCH = "/scratch"
CODE_DIR = "/code"
SANDBOX_UID = 1000
MB = 1024 * 1024
#: the last mount operations of every sandbox: the skeleton bwrap built (the root folder with
#: the mount points, and /dev) becomes read-only. Without them a script running in a user
#: namespace owns that skeleton and could write anywhere in it; as root it is owned by root.
SEAL: tuple[str, ...] = ("--remount-ro", "/dev", "--remount-ro", "/")

#: ``slot``: bwrap runs privileged and ``setpriv`` drops the script to a host uid reserved for
#: this run alone (:mod:`._uidslot`; the harness is root); ``userns``: the script is
#: :attr:`CellSpec.uid` in a user namespace of its own
UidPolicy = Literal["slot", "userns"]
Namespace = Literal["net", "pid", "ipc", "cgroup", "uts"]
#: every namespace besides mount (always new) and user (the uid policy's)
NAMESPACES: tuple[Namespace, ...] = ("net", "pid", "ipc", "cgroup", "uts")
#: the capabilities the warm interpreter keeps to build cells (as root; never a cell's)
_KEEPER_CAPS = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_NET_ADMIN")


@dataclass(frozen=True, kw_only=True)
class CellSpec:
    """Everything a sandboxed script sees and may do (see the module docstring)."""

    uid_policy: UidPolicy
    #: the script's uid in its user namespace (``userns``)
    uid: int = SANDBOX_UID
    #: new namespaces besides mount and user
    namespaces: tuple[Namespace, ...] = NAMESPACES
    #: the host name in the new UTS namespace
    hostname: str = "sandbox"
    #: a new session: the script cannot reach the harness's terminal or process group
    new_session: bool = True
    #: the script dies with the harness
    die_with_parent: bool = True
    #: the complete environment, in order (nothing is inherited; ``PWD`` is the working folder)
    environment: tuple[tuple[str, str], ...]
    #: the system-call filter (classic BPF, :mod:`._seccomp`); None: none for this machine
    seccomp: bytes | None
    #: host paths bound read-only at the same place
    ro_binds: tuple[str, ...]
    #: (target, link) pairs recreated inside (merged-/usr systems)
    symlinks: tuple[tuple[str, str], ...] = ()
    #: the managed R library (a host path), bound read-only at ``SANDBOX_R_LIBRARY``
    r_library: str | None = None
    #: the private scratch folder: the working folder and ``HOME``, holding the data files
    workdir: str = SCRATCH
    #: the size of the scratch and ``/tmp`` tmpfs each, and the largest file a script may write
    tmpfs_bytes: int = 256 * MB
    scratch_mode: int = 0o777
    tmp_mode: int = 0o1777
    #: the data files' mode in the scratch folder
    data_mode: int = 0o644
    #: where the script and the hooks are, read-only
    code_dir: str = CODE_DIR
    code_mode: int = 0o444
    #: the fit-log and output-provenance hooks by file name (none: no fit log)
    hooks: tuple[tuple[str, bytes], ...] = ()
    #: resource limits that do not depend on a run's :class:`Limits`
    fixed_rlimits: tuple[tuple[str, int], ...] = (("RLIMIT_CORE", 0),)

    @property
    def fit_log(self) -> bool:
        return bool(self.hooks)

    @property
    def hook_dir(self) -> str:
        return f"{self.code_dir}/hooks"

    def env(self) -> dict[str, str]:
        return dict(self.environment)

    def cell_env(self) -> dict[str, str]:
        """The environment a script sees (``--chdir`` makes bwrap set ``PWD``)."""
        return {**self.env(), "PWD": self.workdir}

    def script_path(self, language: Language) -> str:
        return f"{self.code_dir}/main.{'R' if language == 'r' else 'py'}"

    def rlimits(self, limits: Limits) -> dict[str, int]:
        """The resource limits of one run, by ``resource`` constant name (soft = hard)."""
        # PID 1 ignores SIGXCPU, so the hard CPU limit (SIGKILL) is the one that acts. The
        # process count holds because the script's uid is not root on the host, and counts only
        # this run: as root the uid is this run's own slot uid; otherwise the count is per user
        # namespace
        return {
            "RLIMIT_CPU": cpu_rlimit(limits),
            "RLIMIT_AS": limits.memory_mb * MB,
            "RLIMIT_FSIZE": self.tmpfs_bytes,
            "RLIMIT_NPROC": limits.max_processes,
            **dict(self.fixed_rlimits),
        }


def cpu_rlimit(limits: Limits) -> int:
    """The CPU limit the kernel applies: ``RLIMIT_CPU`` counts whole seconds, at least one (a
    budget rounds up unless it is within a millisecond of the second below)."""
    return max(1, int(limits.cpu_seconds + 0.999))


def sandbox_env(toolchain: Toolchain) -> dict[str, str]:
    """The complete environment of a sandboxed script (nothing is inherited)."""
    extra = {"R_LIBS": SANDBOX_R_LIBRARY} if toolchain.r_library else {}
    return {
        **extra,
        "PATH": toolchain.path_env,
        "HOME": SCRATCH,
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TMPDIR": "/tmp",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # thread pools that would otherwise size themselves to the host's cores
        "NUMBA_NUM_THREADS": "1",
        "POLARS_MAX_THREADS": "1",
        "RAYON_NUM_THREADS": "1",
        "R_DATATABLE_NUM_THREADS": "1",
        # Arrow's bundled jemalloc reserves about 1 GB of address space on first use (pandas
        # reading a CSV is enough), which the address-space limit would count as the script's
        "ARROW_DEFAULT_MEMORY_POOL": "system",
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def build_spec(
    toolchain: Toolchain,
    *,
    as_root: bool,
    scratch_mb: int,
    fit_log: bool,
    seccomp: bytes | None,
) -> CellSpec:
    """The world of this machine's cells."""
    return CellSpec(
        uid_policy="slot" if as_root else "userns",
        environment=tuple(sandbox_env(toolchain).items()),
        seccomp=seccomp,
        ro_binds=toolchain.ro_binds,
        symlinks=toolchain.symlinks,
        r_library=toolchain.r_library,
        tmpfs_bytes=scratch_mb * MB,
        hooks=tuple(sorted(fitlog.hook_files().items())) if fit_log else (),
    )


def check_relative(rel: str) -> PurePosixPath:
    """Validate a scratch-relative path (no absolute paths, no ``..``)."""
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or rel != str(p):
        raise ValueError(f"scratch paths must be plain relative paths, got {rel!r}")
    return p


# ---------------------------------------------------------------------------------------------
# rendering (a): bubblewrap, for cold cells

#: a descriptor holding some content, passed to bwrap (the caller opens and closes it)
Descriptor = Callable[[bytes | Path], int]


def _perms(mode: int) -> list[str]:
    return ["--perms", f"{mode:04o}"]


def _identity(spec: CellSpec, keeper: bool) -> list[str]:
    if spec.uid_policy == "slot":
        # privileged bwrap; setpriv then drops the script to a slot uid (script_user)
        caps = _KEEPER_CAPS if keeper else ("CAP_SETUID", "CAP_SETGID")
        return [arg for cap in caps for arg in ("--cap-add", cap)]
    if keeper:  # the interpreter is root of its user namespace, and each cell gets its own
        return ["--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "ALL"]
    # a user namespace; RLIMIT_NPROC is then counted per namespace
    uid = str(spec.uid)
    return ["--unshare-user", "--uid", uid, "--gid", uid, "--disable-userns"]


def bwrap_world(
    spec: CellSpec, *, keeper: bool = False, workspace: Path | None = None
) -> list[str]:
    """bwrap's options for the world around a script (identity, namespaces, the read-only
    system, scratch and ``/tmp``, environment); ``keeper``: for the warm interpreter, with the
    capabilities it needs to build each cell's namespaces; ``workspace``: a host folder bound
    at the working folder instead of a tmpfs (it outlives the run; ``run_command``)."""
    args = _identity(spec, keeper)
    args += [f"--unshare-{ns}" for ns in spec.namespaces]
    if "uts" in spec.namespaces:
        args += ["--hostname", spec.hostname]
    if spec.die_with_parent:
        args += ["--die-with-parent"]
    if spec.new_session:
        args += ["--new-session"]
    # the script is the namespace's PID 1: its rusage reaches us, and its exit kills the rest
    args += ["--as-pid-1"]
    # the private /tmp comes first: an environment installed under the host's /tmp (a CI
    # checkout, say) is then bound on top of it instead of being hidden by it
    size = str(spec.tmpfs_bytes)
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += [*_perms(spec.tmp_mode), "--size", size, "--tmpfs", "/tmp"]
    # bwrap would create missing parents with mode 0700: unusable by the script's uid
    library = [SANDBOX_R_LIBRARY] if spec.r_library else []
    for parent in _ancestors([*spec.ro_binds, *library, spec.code_dir + "/x"]):
        if parent not in ("/tmp", "/proc", "/dev"):
            args += ["--perms", "0755", "--dir", parent]
    for path in spec.ro_binds:
        args += ["--ro-bind", path, path]
    if spec.r_library:  # at a fixed path: no host path (a home folder) in a script's output
        args += ["--ro-bind", spec.r_library, SANDBOX_R_LIBRARY]
    for target, link in spec.symlinks:
        args += ["--symlink", target, link]
    if workspace is None:
        args += [*_perms(spec.scratch_mode), "--size", size, "--tmpfs", spec.workdir]
    else:
        args += ["--bind", str(workspace), spec.workdir]
    args += ["--chdir", spec.workdir, "--clearenv"]
    for key, value in spec.environment:
        args += ["--setenv", key, value]
    return args


def bwrap_files(spec: CellSpec, files: Files, fd: Descriptor) -> list[str]:
    """The data files in the scratch folder (their folders made writable, as the folder is)."""
    args: list[str] = []
    made: set[str] = set()
    for rel in sorted(files):
        path = check_relative(rel)
        for parent in reversed(path.parents[:-1]):
            if str(parent) not in made:
                made.add(str(parent))
                args += [*_perms(spec.scratch_mode), "--dir", f"{spec.workdir}/{parent}"]
        args += [*_perms(spec.data_mode), "--file", str(fd(files[rel])), f"{spec.workdir}/{path}"]
    return args


def bwrap_filter(spec: CellSpec, fd: Descriptor) -> list[str]:
    """The system-call filter's option (none without a filter)."""
    return [] if spec.seccomp is None else ["--seccomp", str(fd(spec.seccomp))]


def bwrap_hooks(spec: CellSpec, language: Language, log_fd: int, fd: Descriptor) -> list[str]:
    """The hooks, read-only in the hook folder, and the variables that load them."""
    args = ["--perms", "0755", "--dir", spec.hook_dir]
    for name, content in spec.hooks:
        args += [*_perms(spec.code_mode), "--ro-bind-data", str(fd(content))]
        args += [f"{spec.hook_dir}/{name}"]
    for key, value in fitlog.hook_env(language, log_fd, spec.hook_dir).items():
        args += ["--setenv", key, value]
    return args


def bwrap_cell(
    spec: CellSpec,
    language: Language,
    *,
    files: Files,
    code: bytes,
    fd: Descriptor,
    log_fd: int | None,
) -> list[str]:
    """bwrap's whole argument list of one cold cell, without the bwrap path and the command:
    the world, the data files, the filter, the script, the hooks (with ``log_fd``, the fit
    log's write end) and the seal."""
    args = [*bwrap_world(spec), *bwrap_files(spec, files, fd), *bwrap_filter(spec, fd)]
    args += [*_perms(spec.code_mode), "--ro-bind-data", str(fd(code)), spec.script_path(language)]
    if log_fd is not None and spec.fit_log:
        args += bwrap_hooks(spec, language, log_fd, fd)
    return [*args, *SEAL]


def script_user(spec: CellSpec, setpriv: str | None, slot_uid: int | None) -> list[str]:
    """The command prefix that runs the script as its own uid: with the ``slot`` policy,
    ``setpriv`` switches to ``slot_uid`` with no capabilities and ``no_new_privs``."""
    if spec.uid_policy != "slot":
        return []
    if setpriv is None or slot_uid is None:
        raise OSError("the slot uid policy needs setpriv and a slot uid")
    uid = str(slot_uid)
    return [setpriv, "--reuid", uid, "--regid", uid, "--clear-groups", "--no-new-privs", "--"]


def _ancestors(paths: list[str]) -> list[str]:
    """Parent folders (outermost first) of ``paths`` that are not themselves inside a path."""
    found: set[str] = set()
    for path in paths:
        for parent in PurePosixPath(path).parents:
            if str(parent) != "/" and not any(
                str(parent) == p or str(parent).startswith(p.rstrip("/") + "/") for p in paths
            ):
                found.add(str(parent))
    return sorted(found, key=lambda p: (p.count("/"), p))


# ---------------------------------------------------------------------------------------------
# rendering (b): the warm keeper's configuration, and its interpreter's sandbox


def warm_config(spec: CellSpec, *, fitlog_fd: int, preload: tuple[str, ...]) -> dict[str, object]:
    """What :mod:`._warm_py` builds each warm cell from (JSON; its ``_Config`` reads it back
    under the same names). The read-only system is the interpreter's (:func:`bwrap_keeper`),
    which every cell inherits; the limits come with each cell's request."""
    return {
        "uid_policy": spec.uid_policy,
        "uid": spec.uid,
        "namespaces": list(spec.namespaces),
        "hostname": spec.hostname,
        "new_session": spec.new_session,
        "die_with_parent": spec.die_with_parent,
        "environment": [list(pair) for pair in spec.environment],
        "seccomp": spec.seccomp.hex() if spec.seccomp is not None else None,
        "workdir": spec.workdir,
        "tmpfs_bytes": spec.tmpfs_bytes,
        "scratch_mode": spec.scratch_mode,
        "tmp_mode": spec.tmp_mode,
        "data_mode": spec.data_mode,
        "code_dir": spec.code_dir,
        "code_mode": spec.code_mode,
        "hooks": [[name, content.decode("utf-8")] for name, content in spec.hooks],
        "fitlog_fd": fitlog_fd if spec.fit_log else None,
        "preload": list(preload),
    }


def bwrap_keeper(
    spec: CellSpec, files: Mapping[str, bytes], *, log_fd: int, fd: Descriptor
) -> list[str]:
    """bwrap's arguments for the warm interpreter, without the bwrap path and the command: a
    cell's world with the keeper's capabilities, ``files`` read-only in the code folder (its
    script and configuration) and the Python hooks; the interpreter loads them once, and
    every cell forked from it has them."""
    args = bwrap_world(spec, keeper=True)
    for name, content in files.items():
        args += [*_perms(spec.code_mode), "--ro-bind-data", str(fd(content))]
        args += [f"{spec.code_dir}/{name}"]
    if spec.fit_log:
        args += bwrap_hooks(spec, "python", log_fd, fd)
    # the skeleton is read-only for the interpreter and so for every cell forked from it
    return [*args, *SEAL]
