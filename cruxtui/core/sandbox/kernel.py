"""What the Linux kernel enforces on a check: Landlock, a seccomp filter, a network namespace.

Each mechanism is detected when a worker starts, tried once in a probe child, and then applied
to every check's child before any untrusted code runs; where one is missing (an older kernel,
macOS, a container that forbids it) the others still apply and the worker says which are in
force (`Plan.report`, shown by `cruxtui doctor`). Nothing here ever fails a check where a
mechanism is merely unavailable; a mechanism the probe confirmed and that then fails to apply
does fail the check (`sandbox set-up failed`), so a check never runs with less than reported.

- *Network namespace* (per worker, so no per-check cost): as root `unshare(CLONE_NEWNET)`; as a
  user, where unprivileged user namespaces are allowed, `unshare(CLONE_NEWUSER | CLONE_NEWNET)`
  with the worker's own uid and gid mapped, then every capability dropped. The namespace has only
  a loopback device that is down: no address at all is reachable, abstract unix sockets of the
  host are out of sight. Every process of a check is killed before the next, so nothing a check
  leaves in it survives.
- *Landlock* (per check, Linux >= 5.13, unprivileged): writes only inside the check's temp dir,
  reads only of the interpreter's standard library, the `cruxtui` package and a few files the C
  library wants (time zones, /dev/null, /dev/urandom); nothing else, so not `$HOME`, not `/proc`
  (no other process's environment or command line), not `/etc`. Nothing may be executed. With
  ABI >= 4 no TCP bind or connect; with ABI >= 6 no abstract unix socket and no signal outside
  the check's own processes.
- *seccomp* (per check): `socket()` fails with EPERM, and so do io_uring (which can open sockets
  without `socket()`), ptrace, process_vm_readv/writev, bpf, perf_event_open, userfaultfd, the
  kernel keyring, unshare, setns, mount and open_by_handle_at; a system call of another
  architecture (x32, i386 through `int 0x80`) kills the process.

Why raw system calls through ctypes: Python 3.11 has no `os.unshare` and no prctl, and no
binding for Landlock or seccomp ships with it; the PyPI bindings either need libseccomp (not on
every machine) or are thin ctypes wrappers like this one. The few calls here are looked up once
in the worker; each check's child uses them during set-up and then drops every reference and
unloads ctypes (`forget`), before the audit hook, which refuses ctypes, is installed.
"""

from __future__ import annotations

import contextlib
import os
import platform
import struct
import sys
import sysconfig
from dataclasses import dataclass, field
from typing import Any

# --- Linux constants (include/uapi/linux/{landlock,seccomp,filter,audit,sched,prctl}.h) ---------
_PR_SET_PDEATHSIG = 1
_PR_SET_SECCOMP = 22
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000

_LL_CREATE_RULESET_VERSION = 1
_LL_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1

_READ = _FS_READ_FILE | _FS_READ_DIR
_WORKDIR = (
    _FS_WRITE_FILE
    | _FS_READ_FILE
    | _FS_READ_DIR
    | _FS_REMOVE_DIR
    | _FS_REMOVE_FILE
    | _FS_MAKE_DIR
    | _FS_MAKE_REG
    | _FS_MAKE_SYM
    | _FS_MAKE_FIFO
    | _FS_REFER
    | _FS_TRUNCATE
)
"""What a check may do in its temp dir: everything but execute and make devices or sockets."""
_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV

_SECCOMP_RET_KILL_PROCESS = 0x80000000
_SECCOMP_RET_ERRNO = 0x00050000
_SECCOMP_RET_ALLOW = 0x7FFF0000
_EPERM = 1

# System call numbers per architecture: (audit arch, landlock base, capset, denied calls).
_ARCHES: dict[str, tuple[int, int, int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        444,
        126,
        {
            "socket": 41,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "open_by_handle_at": 304,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
        },
    ),
    "aarch64": (
        0xC00000B7,
        444,
        91,
        {
            "socket": 198,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "open_by_handle_at": 265,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
        },
    ),
}

_X32_BIT = 0x40000000

_libc: Any = None
"""libc through ctypes, in the worker only; every child clears it (`forget`) before its check."""


def _load() -> Any:
    global _libc
    if _libc is None and sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError, ImportError):
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _arch() -> tuple[int, int, int, dict[str, int]] | None:
    return _ARCHES.get(platform.machine()) if sys.platform == "linux" else None


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def prctl(option: int, arg: int = 0) -> bool:
    """prctl(option, arg, 0, 0, 0); True if the kernel accepted it."""
    libc = _load()
    if libc is None:
        return False
    import ctypes

    return int(libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), 0, 0, 0)) == 0


def _syscall(number: int, *args: Any) -> int:
    import ctypes

    libc = _load()
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(ctypes.c_long(number), *args))


# --- the plan a worker makes once --------------------------------------------------------------


@dataclass
class Plan:
    """What each of this worker's checks gets from the kernel (decided once, in the worker)."""

    netns: str | None = None
    """"netns" (root), "userns+netns" (unprivileged) or None: the worker's own network namespace."""
    landlock_abi: int = 0
    ruleset_fd: int | None = None
    """A Landlock ruleset built in the worker (as root, before any uid switch), applied per check."""
    workdir_inode: tuple[int, int] | None = None
    seccomp: Any = None
    """The seccomp program (a ctypes `sock_fprog` and its buffer), installed per check."""
    notes: list[str] = field(default_factory=list)
    """Why a mechanism is not in force, in words."""

    def report(self) -> dict[str, Any]:
        """What is enforced, for `cruxtui doctor` and the tests (plain data)."""
        network = [self.netns] if self.netns else []
        if self.ruleset_fd is not None and self.landlock_abi >= 4:
            network.append("landlock-tcp")
        if self.seccomp is not None:
            network.append("seccomp")
        scoped = self.ruleset_fd is not None and self.landlock_abi >= 6
        return {
            "network": "+".join(network) or "none",
            "filesystem": f"landlock (ABI {self.landlock_abi})"
            if self.ruleset_fd is not None
            else "none",
            "seccomp": "socket, io_uring, ptrace, bpf, keyring, namespaces denied"
            if self.seccomp is not None
            else "none",
            "abstract_unix_sockets": "+".join(
                ([self.netns] if self.netns else [])
                + (["landlock-scope"] if scoped else [])
                + (["seccomp"] if self.seccomp is not None else [])
            )
            or "none",
            "signals": "landlock-scope" if scoped else "none",
            "landlock_abi": self.landlock_abi,
            "notes": list(self.notes),
        }


def landlock_abi() -> int:
    """The Landlock ABI version the kernel offers (0: none)."""
    arch = _arch()
    if arch is None or _load() is None:
        return 0
    try:
        version = _syscall(arch[1], None, 0, _LL_CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def enter_network_namespace(plan: Plan) -> None:
    """Move this (single-threaded) worker into a network namespace of its own, if allowed."""
    if sys.platform != "linux":
        plan.notes.append("network namespaces exist only on Linux")
        return
    unshare = getattr(os, "unshare", None)  # Python >= 3.12

    def call(flags: int) -> bool:
        if unshare is not None:
            try:
                unshare(flags)
                return True
            except OSError:
                return False
        libc = _load()
        if libc is None:
            return False
        import ctypes

        return int(libc.unshare(ctypes.c_int(flags))) == 0

    if os.geteuid() == 0:
        if call(_CLONE_NEWNET):
            plan.netns = "netns"
        else:
            plan.notes.append(f"unshare(CLONE_NEWNET) refused: {os.strerror(_errno() or 1)}")
        return
    uid, gid = os.geteuid(), os.getegid()
    if not call(_CLONE_NEWUSER | _CLONE_NEWNET):
        plan.notes.append(f"no unprivileged user namespace: {os.strerror(_errno() or 1)}")
        return
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1\n"),
            ("gid_map", f"{gid} {gid} 1\n"),
        ):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError as exc:  # the namespace exists but our ids are unmapped: files would break
        raise RuntimeError(f"cannot map ids in the new user namespace: {exc}") from None
    _drop_capabilities()
    plan.netns = "userns+netns"


def _drop_capabilities() -> None:
    """Give up the capabilities a new user namespace grants (they would apply inside it only,
    but a check has no use for any)."""
    import ctypes

    arch = _arch()
    assert arch is not None
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    if _syscall(arch[2], ctypes.byref(header), ctypes.byref(data)) != 0:
        raise RuntimeError(f"capset failed: {os.strerror(_errno())}")


def readable_paths() -> list[str]:
    """Folders and files a check may read: the interpreter's standard library (imports not
    preloaded by the worker), the cruxtui package (jobs), and what the C library may open."""
    paths = {sysconfig.get_paths().get(key, "") for key in ("stdlib", "platstdlib")}
    paths.add(os.path.dirname(os.__file__))
    dynload = os.path.join(sys.base_exec_prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "lib-dynload")  # fmt: skip
    paths.add(dynload)
    import cruxtui

    paths.add(os.path.dirname(os.path.abspath(cruxtui.__file__)))
    paths.update(
        ("/usr/share/zoneinfo", "/etc/localtime", "/dev/null", "/dev/urandom", "/dev/zero")
    )
    return sorted(p for p in paths if p and os.path.exists(p))


def build_landlock(plan: Plan, workdir: str) -> None:
    """Make (or remake, if the temp dir was recreated) the worker's Landlock ruleset."""
    import ctypes

    stat = os.stat(workdir)
    inode = (stat.st_dev, stat.st_ino)
    if plan.ruleset_fd is not None:
        if plan.workdir_inode == inode:
            return
        os.close(plan.ruleset_fd)
        plan.ruleset_fd = None
    abi = plan.landlock_abi
    arch = _arch()
    if abi <= 0 or arch is None:
        return
    handled_fs = (1 << 13) - 1
    if abi >= 2:
        handled_fs |= _FS_REFER
    if abi >= 3:
        handled_fs |= _FS_TRUNCATE
    if abi >= 5:
        handled_fs |= _FS_IOCTL_DEV
    attr = (ctypes.c_uint64 * 3)(
        handled_fs,
        _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0,
        _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0,
    )
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    fd = _syscall(arch[1], ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        plan.notes.append(f"landlock_create_ruleset failed: {os.strerror(_errno())}")
        return

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))

    def allow(path: str, access: int) -> None:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not os.path.isdir(path):
                access &= _FILE_RIGHTS
            rule = PathBeneath(access & handled_fs, target)
            if _syscall(arch[1] + 1, ctypes.c_int(fd), ctypes.c_int(_LL_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:  # fmt: skip
                plan.notes.append(f"landlock rule for {path} refused: {os.strerror(_errno())}")
        finally:
            os.close(target)

    allow(workdir, _WORKDIR)
    for path in readable_paths():
        allow(path, _READ | (_FS_WRITE_FILE if path == "/dev/null" else 0))
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64)  # clear of the fds a child rearranges
    os.close(fd)
    plan.ruleset_fd = high
    plan.workdir_inode = inode


def build_seccomp(plan: Plan) -> None:
    """The BPF program: other architectures killed, the calls in `_ARCHES` refused with EPERM."""
    import ctypes

    arch = _arch()
    if arch is None or _load() is None:
        return
    audit_arch, _, _, denied = arch

    def op(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    deny = _SECCOMP_RET_ERRNO | _EPERM
    program = [op(ld, 0, 0, 4), op(jeq, 1, 0, audit_arch), op(ret, 0, 0, _SECCOMP_RET_KILL_PROCESS)]
    program.append(op(ld, 0, 0, 0))
    if platform.machine() == "x86_64":
        program += [op(jge, 0, 1, _X32_BIT), op(ret, 0, 0, _SECCOMP_RET_KILL_PROCESS)]
    for number in sorted(denied.values()):
        program += [op(jeq, 0, 1, number), op(ret, 0, 0, deny)]
    program.append(op(ret, 0, 0, _SECCOMP_RET_ALLOW))
    blob = b"".join(program)
    buffer = ctypes.create_string_buffer(blob, len(blob))

    class Fprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    fprog = Fprog(len(program), ctypes.addressof(buffer))
    plan.seccomp = (fprog, buffer)


# --- in each check's child ---------------------------------------------------------------------


def confine_child(plan: Plan) -> None:
    """Die with the worker, no new privileges, then Landlock and seccomp (raises if one fails)."""
    import ctypes

    if _load() is None:
        return
    prctl(_PR_SET_PDEATHSIG, 9)  # SIGKILL; must follow any uid switch, which clears it
    if not prctl(_PR_SET_NO_NEW_PRIVS, 1):
        raise OSError(_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    arch = _arch()
    if plan.ruleset_fd is not None and arch is not None:
        if _syscall(arch[1] + 2, ctypes.c_int(plan.ruleset_fd), ctypes.c_uint32(0)) != 0:
            raise OSError(_errno(), "landlock_restrict_self failed")
        os.close(plan.ruleset_fd)
    if plan.seccomp is not None:
        fprog = plan.seccomp[0]
        libc = _load()
        if int(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)) != 0:
            raise OSError(_errno(), "seccomp filter refused")


def forget(plan: Plan) -> None:
    """Drop every way back to ctypes: our references, then the modules (a later `import ctypes`
    fails: `None` in `sys.modules`; the audit hook refuses it as well)."""
    global _libc
    _libc = None
    plan.seccomp = None
    for name in [m for m in sys.modules if m in ("ctypes", "_ctypes") or m.startswith("ctypes.")]:
        sys.modules[name] = None  # type: ignore[assignment]
    sys.modules["ctypes"] = None  # type: ignore[assignment]
    sys.modules["_ctypes"] = None  # type: ignore[assignment]


# --- the worker itself ------------------------------------------------------------------------


def worker_setup() -> None:
    """The worker dies with the pool's process and adopts every orphan of its checks."""
    prctl(_PR_SET_PDEATHSIG, 9)
    prctl(_PR_SET_CHILD_SUBREAPER, 1)


def probe(plan: Plan) -> None:
    """Apply the plan in a throw-away child; keep only what the kernel really accepted there
    (a container may forbid seccomp or Landlock although the calls exist)."""
    if plan.ruleset_fd is None and plan.seccomp is None:
        return
    for what in ("landlock", "seccomp"):
        if (plan.ruleset_fd if what == "landlock" else plan.seccomp) is None:
            continue
        pid = os.fork()
        if pid == 0:  # pragma: no cover - probe child
            try:
                trial = Plan(
                    landlock_abi=plan.landlock_abi,
                    ruleset_fd=plan.ruleset_fd if what == "landlock" else None,
                    seccomp=plan.seccomp if what == "seccomp" else None,
                )
                confine_child(trial)
            except BaseException:  # noqa: BLE001
                os._exit(1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            plan.notes.append(f"{what} could not be applied here")
            if what == "landlock":
                assert plan.ruleset_fd is not None
                os.close(plan.ruleset_fd)
                plan.ruleset_fd = None
            else:
                plan.seccomp = None
