"""A cell's world is stated once (``CellSpec``) and rendered twice: to bubblewrap's arguments for
cold cells and to the warm keeper's configuration. Each rendering parses back to the same spec,
and a field that one renderer ignores fails here."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from causalverify.sandbox import _warm_py, fitlog
from causalverify.sandbox._seccomp import filter_program
from causalverify.sandbox._toolchain import SANDBOX_R_LIBRARY, discover
from causalverify.sandbox.base import Limits
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.spec import (
    SEAL,
    CellSpec,
    build_spec,
    bwrap_cell,
    bwrap_keeper,
    script_user,
    warm_config,
)

LIMITS = Limits(cpu_seconds=7.2, memory_mb=300, max_processes=9)
FILES: dict[str, bytes | Path] = {"data/s001.csv": b"y,x\n1,2\n", "notes.txt": b"n"}
CODE = b"print(1)\n"
LOG_FD = 42
SETPRIV, SLOT_UID = "/usr/bin/setpriv", 1_900_000_007
#: the parts of a warm cell's world it inherits from the interpreter's bubblewrap sandbox (the
#: read-only system); every other field must reach the keeper through its configuration
INHERITED = {"ro_binds", "symlinks", "r_library"}
#: the resource limits a run's ``Limits`` decides; the rest are the spec's own
PER_RUN = {"RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE"}

BASE = CellSpec(
    uid_policy="userns",
    uid=1000,
    environment=(("R_LIBS", SANDBOX_R_LIBRARY), ("PATH", "/venv/bin:/usr/bin"), ("TZ", "UTC")),
    seccomp=b"\x06\x00\x00\x00\x00\x00\xff\x7f",
    ro_binds=("/usr", "/etc/R", "/opt/venv"),
    symlinks=(("usr/lib", "/lib"), ("usr/bin", "/bin")),
    r_library="/home/someone/.local/share/causalverify/r-4.4",
    hooks=(("fitlog.R", b"x <- 1\n"), ("sitecustomize.py", b"import os\n")),
)

#: a different value for every field (a new field needs one here, or the tests below fail)
CHANGES: dict[str, Any] = {
    "uid_policy": "slot",
    "uid": 1234,
    "namespaces": ("net", "pid", "ipc", "uts"),
    "hostname": "elsewhere",
    "new_session": False,
    "die_with_parent": False,
    "environment": (*BASE.environment, ("EXTRA", "1")),
    "seccomp": None,
    "ro_binds": (*BASE.ro_binds, "/srv"),
    "symlinks": (),
    "r_library": None,
    "workdir": "/work",
    "tmpfs_bytes": 1 << 20,
    "scratch_mode": 0o700,
    "tmp_mode": 0o1770,
    "data_mode": 0o600,
    "code_dir": "/src",
    "code_mode": 0o400,
    "hooks": (),
    "fixed_rlimits": (("RLIMIT_CORE", 0), ("RLIMIT_MEMLOCK", 0)),
}

_ARITY = {
    "--cap-add": 1,
    "--uid": 1,
    "--gid": 1,
    "--hostname": 1,
    "--proc": 1,
    "--dev": 1,
    "--perms": 1,
    "--size": 1,
    "--tmpfs": 1,
    "--dir": 1,
    "--chdir": 1,
    "--seccomp": 1,
    "--remount-ro": 1,
    "--ro-bind": 2,
    "--bind": 2,
    "--symlink": 2,
    "--setenv": 2,
    "--file": 2,
    "--ro-bind-data": 2,
}
_FLAGS = {"--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"}
_FLAGS |= {"--as-pid-1", "--clearenv"}


class Contents:
    """A stand-in for descriptors: numbers that name the content they were given."""

    def __init__(self) -> None:
        self.by_fd: dict[int, bytes | Path] = {}

    def __call__(self, content: bytes | Path) -> int:
        fd = 1000 + len(self.by_fd)
        self.by_fd[fd] = content
        return fd


def _options(argv: list[str]) -> list[tuple[str, list[str]]]:
    """bwrap's options in order, with their values; an unknown option fails the test."""
    out: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(argv):
        option = argv[i]
        if option in _FLAGS or (option.startswith("--unshare-") and option != "--unshare-user"):
            out.append((option, []))
            i += 1
            continue
        n = _ARITY[option]
        out.append((option, argv[i + 1 : i + 1 + n]))
        i += 1 + n
    return out


def parse_bwrap(argv: list[str], contents: dict[int, bytes | Path]) -> dict[str, Any]:
    """What bwrap is asked to build, read back as the spec's fields (and the files placed)."""
    found: dict[str, Any] = {
        "namespaces": [],
        "environment": [],
        "ro_binds": [],
        "symlinks": [],
        "r_library": None,
        "seccomp": None,
        "hostname": None,
        "hooks": [],
        "hook_env": {},
        "files": {},
        "new_session": False,
        "die_with_parent": False,
        "uid_policy": "slot",
    }
    perms: int | None = None
    sizes: set[int] = set()
    data_modes: set[int] = set()
    code_modes: set[int] = set()
    placed_code = False
    for option, values in _options(argv):
        mode, perms = perms, None
        if option == "--perms":
            perms = int(values[0], 8)
        elif option == "--unshare-user":
            found["uid_policy"] = "userns"
        elif option == "--uid":
            found["uid"] = int(values[0])
        elif option.startswith("--unshare-"):
            found["namespaces"].append(option.removeprefix("--unshare-"))
        elif option in ("--hostname", "--chdir"):
            found["hostname" if option == "--hostname" else "workdir"] = values[0]
        elif option in ("--new-session", "--die-with-parent"):
            found[option[2:].replace("-", "_")] = True
        elif option == "--size":  # like --perms, it modifies the next operation
            sizes.add(int(values[0]))
            perms = mode
        elif option == "--tmpfs":
            found["tmp_mode" if values[0] == "/tmp" else "scratch_mode"] = mode
        elif option == "--ro-bind" and values[1] == SANDBOX_R_LIBRARY:
            found["r_library"] = values[0]
        elif option == "--ro-bind":
            assert values[0] == values[1]
            found["ro_binds"].append(values[0])
        elif option == "--symlink":
            found["symlinks"].append(tuple(values))
        elif option == "--setenv" and placed_code:
            found["hook_env"][values[0]] = values[1]
        elif option == "--setenv":
            found["environment"].append(tuple(values))
        elif option == "--seccomp":
            found["seccomp"] = contents[int(values[0])]
        elif option == "--file":
            data_modes.add(mode or -1)
            found["files"][values[1]] = contents[int(values[0])]
        elif option == "--ro-bind-data":
            code_modes.add(mode or -1)
            target = PurePosixPath(values[1])
            content = contents[int(values[0])]
            if placed_code:
                found["hooks"].append((target.name, content))
                found["hook_dir"] = str(target.parent)
            else:
                placed_code = True
                found["code_dir"], found["code"] = str(target.parent), content
    found["tmpfs_bytes"] = sizes.pop() if len(sizes) == 1 else sizes
    if data_modes:
        (found["data_mode"],) = data_modes
    (found["code_mode"],) = code_modes
    found["namespaces"] = tuple(found["namespaces"])
    for key in ("environment", "ro_binds", "symlinks", "hooks"):
        found[key] = tuple(found[key])
    return found


def render_cold(spec: CellSpec) -> dict[str, Any]:
    contents = Contents()
    argv = bwrap_cell(spec, "python", files=FILES, code=CODE, fd=contents, log_fd=LOG_FD)
    return {
        "argv": argv,
        "contents": contents.by_fd,
        "rlimits": spec.rlimits(LIMITS),
        "user": script_user(spec, SETPRIV, SLOT_UID),
    }


def render_warm(spec: CellSpec) -> dict[str, Any]:
    """The keeper's configuration as the keeper reads it, the read-only system its interpreter's
    sandbox gives every cell, and a cell request's resource limits."""
    config = json.loads(json.dumps(warm_config(spec, fitlog_fd=100, preload=("numpy",))))
    contents = Contents()
    keeper = bwrap_keeper(spec, {"warm.py": b"pass\n"}, log_fd=100, fd=contents)
    mounts = parse_bwrap(keeper, contents.by_fd)
    return {
        "config": _warm_py._Config(config),
        "inherited": {name: mounts[name] for name in INHERITED},
        "rlimits": spec.rlimits(LIMITS),
        "keeper": keeper,
    }


def spec_from_cold(rendered: dict[str, Any]) -> CellSpec:
    found = parse_bwrap(rendered["argv"], rendered["contents"])
    assert rendered["argv"][-len(SEAL) :] == list(SEAL)
    assert found["code"] == CODE
    assert found["files"] == {f"{found['workdir']}/{rel}": c for rel, c in FILES.items()}
    if found["hooks"]:
        assert found["hook_dir"] == f"{found['code_dir']}/hooks"
        assert found["hook_env"] == fitlog.hook_env("python", LOG_FD, found["hook_dir"])
    if found["uid_policy"] == "slot":
        assert rendered["user"][:1] == [SETPRIV] and str(SLOT_UID) in rendered["user"]
        found["uid"] = BASE.uid  # the slot policy's uid is the slot's, not the spec's
    else:
        assert rendered["user"] == []
    rlimits = dict(rendered["rlimits"])
    assert rlimits.pop("RLIMIT_FSIZE") == found["tmpfs_bytes"]
    assert (rlimits.pop("RLIMIT_CPU"), rlimits.pop("RLIMIT_AS")) == (8, 300 << 20)
    assert rlimits.pop("RLIMIT_NPROC") == 9
    found["fixed_rlimits"] = tuple(rlimits.items())
    if "uts" not in found["namespaces"]:
        found["hostname"] = BASE.hostname  # no UTS namespace: no host name of its own
    names = {f.name for f in dataclasses.fields(CellSpec)}
    return CellSpec(**{k: v for k, v in found.items() if k in names})


def spec_from_warm(rendered: dict[str, Any]) -> CellSpec:
    cfg = rendered["config"]
    values: dict[str, Any] = {}
    for field in dataclasses.fields(CellSpec):
        if field.name in INHERITED:
            values[field.name] = rendered["inherited"][field.name]
        elif field.name == "fixed_rlimits":
            values[field.name] = tuple(
                (k, v) for k, v in rendered["rlimits"].items() if k not in PER_RUN
            )
        else:  # an AttributeError: the keeper does not read this field
            values[field.name] = getattr(cfg, field.name)
    assert cfg.script == f"{cfg.code_dir}/main.py" and cfg.hook_dir == f"{cfg.code_dir}/hooks"
    assert cfg.fitlog_fd == (100 if cfg.hooks else None)
    return CellSpec(**values)


def _specs() -> list[CellSpec]:
    real = [
        build_spec(discover(), as_root=root, scratch_mb=64, fit_log=log, seccomp=filter_program())
        for root in (False, True)
        for log in (True, False)
    ]
    return [BASE, *(dataclasses.replace(BASE, **{k: v}) for k, v in CHANGES.items()), *real]


@pytest.mark.parametrize("spec", _specs())
def test_the_bwrap_arguments_parse_back_to_the_spec(spec: CellSpec) -> None:
    assert spec_from_cold(render_cold(spec)) == spec


@pytest.mark.parametrize("spec", _specs())
def test_the_warm_configuration_parses_back_to_the_spec(spec: CellSpec) -> None:
    rendered = render_warm(spec)
    assert spec_from_warm(rendered) == spec
    cfg = rendered["config"]
    assert cfg.flags == _warm_py._NEWNS | sum(_warm_py._NAMESPACE_FLAGS[n] for n in spec.namespaces)
    assert cfg.as_root == (spec.uid_policy == "slot")


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(CellSpec)])
def test_every_field_is_rendered_by_both_renderers(name: str) -> None:
    changed = dataclasses.replace(BASE, **{name: CHANGES[name]})
    assert changed != BASE
    assert render_cold(changed) != render_cold(BASE), f"bwrap ignores {name}"
    warm, base = render_warm(changed), render_warm(BASE)
    assert (vars(warm["config"]), warm["inherited"], warm["rlimits"]) != (
        vars(base["config"]),
        base["inherited"],
        base["rlimits"],
    ), f"the warm keeper ignores {name}"


def test_the_keeper_sandbox_is_a_cells_world_with_the_keepers_identity() -> None:
    for policy in ("userns", "slot"):
        spec = dataclasses.replace(BASE, uid_policy=policy)
        keeper = render_warm(spec)["keeper"]
        cold = render_cold(spec)["argv"]
        assert keeper[-len(SEAL) :] == list(SEAL)
        assert "--disable-userns" not in keeper and "--seccomp" not in keeper
        world = cold[cold.index("--unshare-net") : cold.index("--chdir")]
        assert keeper[keeper.index("--unshare-net") : keeper.index("--chdir")] == world


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_a_changed_field_reaches_cold_and_warm_cells_alike() -> None:
    box = BwrapSandbox(warm=True)
    try:
        box.spec = dataclasses.replace(
            box.spec,
            hostname="cv-spec-probe",
            environment=(*box.spec.environment, ("CV_SPEC_PROBE", "42")),
            data_mode=0o640,
        )
        code = (
            "import os, stat\n"
            "print(os.uname().nodename, os.environ['CV_SPEC_PROBE'],"
            " oct(stat.S_IMODE(os.stat('in/x.csv').st_mode)))\n"
        )
        files: dict[str, bytes | Path] = {"in/x.csv": b"a\n"}
        cold = box.run_cold(code, "python", files, Limits(wall_seconds=60))
        assert box.warm is not None
        warm = box.warm.run(code, files, Limits(wall_seconds=120))
    finally:
        box.close()
    assert cold.status == "ok", cold
    assert cold.stdout == "cv-spec-probe 42 0o640\n"
    assert warm is not None and warm.status == "ok", warm
    assert warm.stdout == cold.stdout


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
@pytest.mark.parametrize("bwrap", ["/nonexistent/bwrap", shutil.which("false") or "/bin/false"])
def test_cold_cells_and_commands_fail_setup_through_one_path(bwrap: str, tmp_path: Path) -> None:
    """bwrap that cannot be run, or exits before starting anything: a ``sandbox_unavailable``
    result (never an exception), and no descriptor left open (the fit log's pipe included)."""
    box = BwrapSandbox(warm=False)
    box.toolchain = dataclasses.replace(box.toolchain, bwrap=bwrap)
    before = _open_fds()
    results = [
        box.run_cold("print(1)\n", "python", FILES, Limits(wall_seconds=10)),
        box.run_command(["true"], workspace=tmp_path, limits=Limits(wall_seconds=10)),
    ]
    assert _open_fds() == before
    for result in results:
        assert result.status == "sandbox_unavailable", result
        assert result.detail.startswith("sandbox setup failed: ")
