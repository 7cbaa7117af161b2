"""The audit-hook policy installed in every check's child: a second layer behind the kernel's.

A check's code can reach this module through `sys.modules` and rebind anything in it, so the
policy lives only in the closure `make_guard` returns: event names in frozensets and tuples,
the temp dir as a string, and the few functions it calls captured as C builtins (`posix.lstat`,
`posix.readlink`, ...), never looked up in a module at event time. Audit hooks cannot be removed,
and CPython disables tracing inside them, so a trace function cannot rewrite the closure's cells.
The hook refuses: process creation, signals, every ctypes event (so no foreign call even through
ctypes' C types left in memory), importing ctypes, sockets, rlimit changes, walking the garbage
collector's objects (the way to other processes' leftovers), and writing, renaming or deleting
outside the temp dir. Paths are accepted only as `str`, `bytes` or an fd: a path object's
`__fspath__` could answer differently when the hook asks than when the call itself asks.
"""

from __future__ import annotations

import os
import posix
import sys
from collections.abc import Callable
from typing import Any

_BLOCKED_PREFIXES = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "os.startfile",
    "subprocess.",
    "signal.pthread_kill",
    "ctypes.",
    "socket.",
    "resource.",
    "sys.addaudithook",
    "sys.remote_exec",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "winreg.",
    "webbrowser.",
    "_posixsubprocess.",
)
_PATH_EVENTS = {
    "os.remove": 1,
    "os.rmdir": 1,
    "os.rename": 2,
    "os.mkdir": 1,
    "os.symlink": 2,
    "os.link": 2,
    "os.chmod": 1,
    "os.chown": 1,
    "os.truncate": 1,
    "os.utime": 1,
    "os.chflags": 1,
    "os.lchflags": 1,
    "os.setxattr": 1,
    "os.removexattr": 1,
    "shutil.rmtree": 1,
}
_REFUSED_IMPORTS = ("ctypes", "_ctypes")


def make_guard(workdir: str) -> Callable[[str, tuple[Any, ...]], None]:
    """The hook for one check; everything it decides by is bound here, once."""
    blocked = tuple(_BLOCKED_PREFIXES)
    path_events = tuple(_PATH_EVENTS.items())
    path_event_names = frozenset(_PATH_EVENTS)
    refused_imports = tuple(_REFUSED_IMPORTS)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    lstat = posix.lstat
    readlink = posix.readlink
    getcwd = posix.getcwd
    s_islnk = 0o120000
    s_ifmt = 0o170000
    s_isdir = 0o040000
    encoding = sys.getfilesystemencoding()
    root = os.path.realpath(workdir)  # trusted: before any check code runs
    inside_prefix = root + "/"
    str_type, bytes_type, int_type = str, bytes, int
    isinstance_ = isinstance
    type_ = type

    def text_of(path: Any) -> str | None:
        kind = type_(path)
        if kind is str_type:
            return path  # type: ignore[no-any-return]
        if kind is bytes_type:
            return path.decode(encoding, "surrogateescape")  # type: ignore[no-any-return]
        return None

    def resolve(path: str) -> str:
        """realpath, from captured C functions only (posixpath's helpers can be rebound)."""
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        parts = [p for p in path.split("/") if p and p != "."]
        done: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                if done:
                    done.pop()
                continue
            candidate = "/" + "/".join(done + [part])
            try:
                mode = lstat(candidate).st_mode
            except OSError:
                done.append(part)
                continue
            if mode & s_ifmt == s_islnk:
                hops += 1
                if hops > 40:
                    return "/"  # a loop: treat as outside
                target = readlink(candidate)
                if target.startswith("/"):
                    done = []
                parts = [p for p in target.split("/") if p and p != "."] + parts
                continue
            done.append(part)
        return "/" + "/".join(done)

    def inside(path: Any) -> bool:
        if type_(path) is int_type:
            return True  # an fd the check already holds
        text = text_of(path)
        if text is None:
            return False
        full = resolve(text)
        return full == root or full.startswith(inside_prefix)

    def is_dir(text: str) -> bool:
        try:
            return lstat(resolve(text)).st_mode & s_ifmt == s_isdir
        except OSError:
            return False

    def refuse(event: str) -> None:
        raise PermissionError(f"blocked by the cruxtui sandbox: {event}")

    def guard(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance_(mode, str_type) and any(c in mode for c in "wax+")) or (
                isinstance_(flags, int_type) and flags & write_flags
            )
            if path is None or inside(path):
                return
            text = text_of(path)
            if text is None:
                refuse("open with a path that is not a str")
            elif writes:
                refuse(f"open {text!r} for writing")
            elif is_dir(text):
                refuse("opening a folder")
        elif event in path_event_names:
            for name, count in path_events:
                if name != event:
                    continue
                for path in args[:count]:
                    if path is not None and not inside(path):
                        refuse(f"{event} {text_of(path) or path!r}")
        elif event == "import":
            name = args[0] if args else ""
            if type_(name) is str_type and (name in refused_imports or name.startswith("ctypes.")):
                refuse(f"import {name}")
        elif event.startswith(blocked):
            refuse(event)

    return guard
