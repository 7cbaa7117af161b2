"""`cruxtui serve`: the TUI in a web browser, for a talk, a lab meeting or a poster.

cruxtui serve                        # http://127.0.0.1:8000, this machine only
cruxtui serve --demo --port 8080     # the guided tour, in every tab
cruxtui serve --host 0.0.0.0         # reachable from the network: says so, loudly

textual-serve (the Textual project's server) starts one `cruxtui` process per browser tab, with
the TUI options given here passed through, and relays it to a terminal in the page.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import shlex
import socket
import sys

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import add_dataset_option, open_dataset
from cruxtui.core.data.dataset import Source

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from cruxtui.cli.main import add_tui_options

    p = sub.add_parser(
        "serve",
        help="serve the TUI in a web browser (one app per tab)",
        description="Serve the TUI in a web browser with textual-serve: each tab gets its own "
        "cruxtui, started with the TUI options given here. Binds to this machine only unless "
        "--host says otherwise. Ctrl+C stops the server and every tab's app.",
    )
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only; 0.0.0.0 lets "
        "anyone who can reach this machine in)",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--font-size",
        type=int,
        default=16,
        metavar="PX",
        help="text size in the browser, in pixels (default 16; 24 or more for a projector; "
        "?fontsize=N in the address overrides it per tab)",
    )
    add_dataset_option(p)
    add_tui_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        raise CliError(f"--port must be between 1 and 65535, not {args.port}")
    if not 6 <= args.font_size <= 96:
        raise CliError(f"--font-size must be between 6 and 96 pixels, not {args.font_size}")
    # Open the dataset once here: a bad --dataset is one line now, not a dead session in every
    # tab, and a download (if one is allowed) happens once, for the cache every tab then reads.
    # The tour never downloads (it must work with no network), here as in the tabs.
    args.offline = args.offline or args.demo
    dataset = open_dataset(args)
    if dataset.notice:
        print(f"note: {dataset.notice}", file=sys.stderr)
    check_port_free(args.host, args.port)
    if not is_loopback(args.host):
        print(exposed_warning(args.host, args.port), file=sys.stderr, flush=True)

    from cruxtui.cli.web_server import TabServer

    command = app_command(args, offline=dataset.source is Source.STARTER)
    server = TabServer(
        command, args.host, args.port, url=page_url(args.host, args.port), font_size=args.font_size
    )
    try:
        server.serve()
    except OSError as exc:  # lost the port between the check and the bind
        raise CliError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    print("cruxtui serve: stopped", flush=True)
    return 0


def app_command(args: argparse.Namespace, *, offline: bool = False) -> str:
    """The shell command textual-serve runs per tab: this same cruxtui (same interpreter, same
    install), given the TUI options of `args`, quoted with shlex; `exec` so that the tab's
    process is the app itself, not a shell around it.

    `offline`: the server found no benchmark file and could not download one; every tab would try
    again (and wait) for nothing, so they are told not to.
    """
    argv = [sys.executable, "-m", "cruxtui", *tui_argv(args)]
    if offline and "--offline" not in argv:
        argv.append("--offline")
    return "exec " + shlex.join(argv)


def tui_argv(args: argparse.Namespace) -> list[str]:
    """The command-line options that give the TUI the same settings as `args`.

    Rebuilt from the TUI's own option definitions, so an option added to `add_tui_options` is
    passed through with no change here.
    """
    from cruxtui.cli.main import add_tui_options

    reference = argparse.ArgumentParser(add_help=False)
    add_dataset_option(reference)
    add_tui_options(reference)
    out: list[str] = []
    for action in reference._actions:
        if not action.option_strings or not hasattr(args, action.dest):
            continue
        value = getattr(args, action.dest)
        default = None if action.default is argparse.SUPPRESS else action.default
        if value == default or (default is None and value is False):
            continue
        flag = max(action.option_strings, key=len)
        if action.nargs == 0:  # store_true / store_false / store_const: the flag alone
            out.append(flag)
        elif isinstance(value, list):
            for item in value:
                out += [flag, str(item)]
        else:
            out += [flag, str(value)]
    return out


def check_port_free(host: str, port: int) -> None:
    """Refuse, in one line, a port that something already listens on, before anything starts.

    SO_REUSEADDR as aiohttp binds it: a port a stopped server left in TIME_WAIT is free.
    """
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise CliError(f"cannot serve on {host!r}: {exc.strerror}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise CliError(
                        f"port {port} on {host} is already in use (another `cruxtui serve`?); "
                        "choose another with --port"
                    ) from None
                raise CliError(f"cannot serve on {host}:{port}: {exc.strerror}") from None


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may well resolve to a public address
        return False


def page_url(host: str, port: int) -> str:
    """The address to print: a wildcard bind is opened as this machine's own address."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def exposed_warning(host: str, port: int) -> str:
    bar = "!" * 78
    return (
        f"{bar}\n"
        f"cruxtui: WARNING: serving on {host}:{port}, NOT only this machine.\n"
        "Anyone who can reach this address gets a cruxtui of their own, running as you: it can\n"
        "call your model endpoints (with their keys) and read and write your runs and cases.\n"
        "There is no password. Use it only on a network you trust; the default is 127.0.0.1.\n"
        f"{bar}"
    )
