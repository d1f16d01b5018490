"""A small seccomp filter for sandboxed scripts, handed to bubblewrap with ``--seccomp``.

It closes two holes that namespaces leave open:

* **the kernel keyring** (``add_key``, ``keyctl``, ``request_key``): keyrings are not isolated by
  mount, PID, IPC or network namespaces, and a user's keyring outlives the process. As root every
  run gets a slot uid that later runs reuse, so a key stored by one cell could be read by a later
  one. The calls fail with ``EPERM``.
* **new user namespaces** (``unshare``/``clone`` with ``CLONE_NEWUSER``): inside one, the script
  holds every capability over new mount namespaces and can, for one, mount a tmpfs of any size.
  ``clone3`` passes its flags in memory a filter cannot read, so it fails with ``ENOSYS``, and
  the C library falls back to ``clone``.

System calls of any other architecture (e.g. 32-bit x86 or x32 on x86-64) would bypass the
numbers checked here, so a process using them is killed (x32: ``EPERM``).
"""

from __future__ import annotations

import errno
import platform
import struct

# classic BPF opcodes
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
_CLONE_NEWUSER = 0x10000000
_X32_BIT = 0x40000000

# offsets in struct seccomp_data
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # _ARG0_LOW: both supported machines are little-endian


# machine -> (AUDIT_ARCH, add_key, request_key, keyctl, unshare, clone, clone3)
_SYSCALLS: dict[str, tuple[int, int, int, int, int, int, int]] = {
    "x86_64": (0xC000003E, 248, 249, 250, 272, 56, 435),
    "aarch64": (0xC00000B7, 217, 218, 219, 97, 220, 435),
}


def syscall_numbers(machine: str | None = None) -> dict[str, int] | None:
    """The filtered system calls' numbers on ``machine`` (default: this one), None if unknown."""
    entry = _SYSCALLS.get(machine or platform.machine())
    if entry is None:
        return None
    names = ("audit_arch", "add_key", "request_key", "keyctl", "unshare", "clone", "clone3")
    return dict(zip(names, entry, strict=True))


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The compiled filter for ``machine`` (default: this one), or None if it is not supported.

    Parameters
    ----------
    machine : str, optional
        ``platform.machine()`` name; ``x86_64`` and ``aarch64`` are supported.

    Returns
    -------
    bytes or None
        An array of ``struct sock_filter`` in native byte order, as ``bwrap --seccomp`` reads it.
    """
    entry = _SYSCALLS.get(machine or platform.machine())
    if entry is None:
        return None
    arch, add_key, request_key, keyctl, unshare, clone, clone3 = entry
    # jump offsets count from the next instruction; the targets are numbered on the right
    prog = [
        _insn(_LD_ABS, _ARCH),  # 0
        _insn(_JEQ, arch, jt=1),  # 1: native -> 3
        _insn(_RET, _KILL_PROCESS),  # 2: another architecture's system call
        _insn(_LD_ABS, _NR),  # 3
        _insn(_JGE, _X32_BIT, jt=10),  # 4: x32 ABI -> 15
        _insn(_JEQ, add_key, jt=9),  # 5: -> 15
        _insn(_JEQ, request_key, jt=8),  # 6: -> 15
        _insn(_JEQ, keyctl, jt=7),  # 7: -> 15
        _insn(_JEQ, clone3, jt=7),  # 8: -> 16
        _insn(_JEQ, unshare, jt=2),  # 9: -> 12
        _insn(_JEQ, clone, jt=1),  # 10: -> 12
        _insn(_RET, _ALLOW),  # 11
        _insn(_LD_ABS, _ARG0_LOW),  # 12: the flags (low 32 bits)
        _insn(_JSET, _CLONE_NEWUSER, jt=1),  # 13: -> 15
        _insn(_RET, _ALLOW),  # 14
        _insn(_RET, _ERRNO | errno.EPERM),  # 15
        _insn(_RET, _ERRNO | errno.ENOSYS),  # 16
    ]
    return b"".join(prog)
