"""The sandbox pool: results, limits, isolation, clean-up, and recovery from dead workers."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cruxtui.core.sandbox.pool import Limits, Sandbox, SandboxError
from cruxtui.core.util import values
from cruxtui.core.util.bounded_repr import bounded_repr

EXEC = "cruxtui.core.sandbox.jobs.checks:exec_call"
AS_ROOT_ON_LINUX = sys.platform == "linux" and os.geteuid() == 0


@pytest.fixture(scope="module")
def box() -> Sandbox:
    with Sandbox(workers=2, limits=Limits(timeout=1.5)) as sandbox:
        yield sandbox


def run(box: Sandbox, call: str, code: str = "", **limits: object):
    return box.run(EXEC, {"code": code, "call": call}, Limits(**({"timeout": 1.5} | limits)))


def processes_of(uids: list[int]) -> list[int]:
    """Live processes (not zombies of ours) whose real uid is one of the sandbox's private uids."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
        except OSError:
            continue
        if int(fields.get("Uid", "-1").split()[0]) in uids:
            found.append(int(status.parent.name))
    return found


def test_values_come_back_with_exact_types(box: Sandbox) -> None:
    code = "def f():\n    return [(1, 2), {3, 4}, frozenset({5}), {'a': b'x'}, 1+2j, True, None, 10**5000, -0.0]"
    outcome = run(box, "f()", code)
    assert outcome.status == "ok", outcome.error
    value = outcome.value
    assert value == [
        (1, 2),
        {3, 4},
        frozenset({5}),
        {"a": b"x"},
        1 + 2j,
        True,
        None,
        10**5000,
        -0.0,
    ]
    assert [type(v) for v in value] == [
        tuple,
        set,
        frozenset,
        dict,
        complex,
        bool,
        type(None),
        int,
        float,
    ]
    assert math.copysign(1, value[-1]) == -1
    nan = run(box, "float('nan')").value
    assert math.isnan(nan)


def test_checks_can_use_every_codec_and_common_modules(box: Sandbox) -> None:
    """Checks may run as a uid that cannot read the interpreter's files: the worker preloads."""
    assert run(box, "'13:45:56'.encode('shift_jis')").value == b"13:45:56"
    assert run(box, "'a'.encode('cp037').decode('cp037')").value == "a"
    assert run(box, "__import__('statistics').median([3, 1, 2])").value == 2


def test_map_keeps_order_and_runs_in_parallel(box: Sandbox) -> None:
    items = [
        (
            EXEC,
            {
                "code": "import time\ndef f(x):\n    time.sleep(0.2)\n    return x",
                "call": f"f({i})",
            },
        )
        for i in range(6)
    ]
    start = time.monotonic()
    outcomes = list(box.map(items))
    assert [o.value for o in outcomes] == list(range(6))
    assert time.monotonic() - start < 6 * 0.2  # two workers: ~0.6 s, never the serial 1.2 s


def test_a_slow_check_drops_to_the_lowest_priority_and_a_quick_one_does_not(box: Sandbox) -> None:
    """A check still running after a moment is reniced, so quick checks on the other workers
    keep the CPU while it waits out its wall-clock limit; its result is unaffected."""
    code = (
        "import os, time\n"
        "def f(wait):\n"
        "    before = os.getpriority(os.PRIO_PROCESS, 0)\n"
        "    time.sleep(wait)\n"
        "    return before, os.getpriority(os.PRIO_PROCESS, 0)"
    )
    slow = box.run("cruxtui.core.sandbox.jobs.checks:exec_call", {"code": code, "call": "f(0.6)"})
    quick = box.run("cruxtui.core.sandbox.jobs.checks:exec_call", {"code": code, "call": "f(0)"})
    base = os.getpriority(os.PRIO_PROCESS, 0)  # the workers inherit the suite's niceness
    assert (slow.status, slow.value) == ("ok", (base, 19))
    assert (quick.status, quick.value) == ("ok", (base, base))


def test_slow_checks_wait_out_their_limits_side_by_side() -> None:
    """Default workers outnumber the cores, so several endless loops time out together rather
    than one core-sized wave after another."""
    with Sandbox() as many:
        assert many.workers >= 2 * min(4, os.cpu_count() or 1)
        loops = min(many.workers, 4)
        t0 = time.monotonic()
        outcomes = list(
            many.map(
                [
                    (
                        "cruxtui.core.sandbox.jobs.checks:exec_call",
                        {"code": "def f():\n    while True: pass", "call": "f()"},
                    )
                ]
                * loops,
                limits=Limits(timeout=1.0),
            )
        )
        elapsed = time.monotonic() - t0
    assert [o.status for o in outcomes] == ["timeout"] * loops
    assert elapsed < 1.0 * 2  # one wave of 1 s limits, not loops / cores waves


def test_failures_have_statuses_and_reasons(box: Sandbox) -> None:
    assert run(box, "1/0").error == "ZeroDivisionError: division by zero"
    assert run(box, "1/0").status == "exception"
    slow = run(box, "next(filter(None, iter(int, 1)))", timeout=0.5)
    assert slow.status == "timeout" and 0.5 <= slow.elapsed < 3
    assert run(box, "'x' * 10**10").status == "memory"
    assert run(box, "[print('x' * 1000) for _ in range(1000)]").status == "output_limit"
    bad = run(box, "object()")
    assert bad.status == "bad_result" and "object" in bad.error
    subclass = run(box, "type('D', (dict,), {})()")
    assert subclass.status == "bad_result"
    crash = run(box, "__import__('faulthandler')._sigsegv()")
    assert crash.status == "crashed" and "SIGSEGV" in crash.error
    cyclic = run(box, "(lambda a: a.append(a) or a)([])")
    assert cyclic.status == "bad_result"


def test_cpu_limit_catches_a_check_that_outlives_its_wall_clock(box: Sandbox) -> None:
    outcome = box.run(
        EXEC,
        {"code": "", "call": "next(filter(None, iter(int, 1)))"},
        Limits(timeout=5, cpu_seconds=1),
    )
    assert outcome.status == "timeout" and "CPU" in outcome.error


def test_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUXTUI_TEST_SECRET", "hunter2")
    with Sandbox(workers=1) as fresh:
        env = fresh.run(EXEC, {"code": "", "call": "dict(__import__('os').environ)"}).value
    assert "CRUXTUI_TEST_SECRET" not in env
    assert not any("hunter2" in v for v in env.values())
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR"}


def test_files_only_in_the_private_temp_dir(box: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    outcome = run(box, f"open({str(target)!r}, 'w').write('x')")
    assert outcome.status == "exception" and "blocked by the cruxtui sandbox" in outcome.error
    assert not target.exists()
    inside = run(box, "open('here.txt', 'w').write('x') and __import__('os').getcwd()")
    assert inside.status == "ok"
    assert not Path(inside.value, "here.txt").exists()  # emptied after the check


def test_unknown_job_is_a_programming_error(box: Sandbox) -> None:
    with pytest.raises(SandboxError, match="cannot load sandbox job"):
        box.run("cruxtui.core.sandbox.pool:no_such_job", {})
    assert run(box, "2 + 2").value == 4


def test_payload_must_be_plain_data(box: Sandbox) -> None:
    with pytest.raises(TypeError, match="plain data"):
        box.run(EXEC, {"code": object(), "call": "1"})


def test_a_killed_worker_is_replaced_and_its_check_fails() -> None:
    with Sandbox(workers=1) as fresh:
        victim = fresh.pids[0]

        def kill_soon() -> None:
            time.sleep(0.3)
            os.kill(victim, 9)

        import threading

        threading.Thread(target=kill_soon).start()
        outcome = fresh.run(EXEC, {"code": "import time", "call": "time.sleep(2)"})
        assert outcome.status == "crashed" and "worker" in outcome.error
        assert fresh.run(EXEC, {"code": "", "call": "6 * 7"}).value == 42
        assert fresh.pids != [victim]
        # The killed worker could not clean up; its replacement removed the leftovers.
        for folder in (Path("/dev/shm"), Path(os.environ.get("TMPDIR", "/tmp"))):
            assert list(folder.glob(f"cruxtui-sandbox-{victim}-*")) == []


@pytest.mark.skipif(
    not AS_ROOT_ON_LINUX, reason="kernel-level isolation (private uid) needs root on Linux"
)
def test_kernel_limits_hold_without_the_python_guard(tmp_path: Path) -> None:
    """With the audit hook off, the kernel alone still stops forks, kills, and stray files."""
    unguarded = Limits(timeout=1.5, python_guard=False)
    with Sandbox(workers=1, limits=unguarded) as raw:
        fork = raw.run(EXEC, {"code": "import os", "call": "[os.fork() for _ in range(50)]"})
        assert fork.status == "exception" and "BlockingIOError" in fork.error
        uids = raw.uids  # as the worker confirmed it with the first check
        assert uids and os.getuid() not in uids
        parent = raw.run(EXEC, {"code": "import os", "call": "os.kill(os.getppid(), 9)"})
        assert parent.status == "exception" and "PermissionError" in parent.error
        group = raw.run(EXEC, {"code": "import os", "call": "os.killpg(0, 9)"})
        assert group.status == "crashed" and "SIGKILL" in group.error
        stray = Path("/tmp") / f"cruxtui-test-stray-{os.getpid()}"
        wrote = raw.run(EXEC, {"code": "", "call": f"open({str(stray)!r}, 'w').write('x')"})
        if raw.enforcement()["filesystem"] == "none":
            assert wrote.status == "ok"  # /tmp is world-writable: the kernel lets it through ...
        else:
            assert wrote.status == "exception" and "PermissionError" in wrote.error  # Landlock
        assert not stray.exists()  # ... and the worker sweeps it away after the check
        secret = tmp_path / "secret"
        secret.write_text("hunter2")
        secret.chmod(0o600)
        read = raw.run(EXEC, {"code": "", "call": f"open({str(secret)!r}).read()"})
        assert read.status == "exception" and "PermissionError" in read.error
        assert raw.run(EXEC, {"code": "", "call": "1 + 1"}).value == 2
        assert processes_of(uids) == []


@pytest.mark.skipif(not AS_ROOT_ON_LINUX, reason="uid switching needs root on Linux")
def test_uid_switch_is_probed_before_use() -> None:
    """Where the private uid cannot be taken (unmapped in a user namespace, say), the worker runs
    its checks without it instead of crashing every one."""
    from cruxtui.core.sandbox.pool import SANDBOX_UID_BASE
    from cruxtui.core.sandbox.worker import can_switch_to

    assert can_switch_to(SANDBOX_UID_BASE + 49)
    assert not can_switch_to(-1)


def test_refuses_python_dash_o() -> None:
    result = subprocess.run(
        [sys.executable, "-O", "-c", "from cruxtui.core.sandbox.pool import Sandbox; Sandbox()"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "python -O" in result.stderr


def test_close_leaves_no_worker_and_no_temp_dir() -> None:
    fresh = Sandbox(workers=2)
    pids = fresh.pids
    assert fresh.run(EXEC, {"code": "", "call": "open('x', 'w').write('y')"}).value == 1
    fresh.close()
    for pid in pids:
        assert (
            not Path(f"/proc/{pid}").exists()
            or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        )
    for folder in (Path("/dev/shm"), Path(os.environ.get("TMPDIR", "/tmp"))):
        for pid in pids:
            assert list(folder.glob(f"cruxtui-sandbox-{pid}-*")) == []
    with pytest.raises(SandboxError):
        fresh.run(EXEC, {"code": "", "call": "1"})


def test_wire_format_refuses_anything_but_plain_data() -> None:
    class Liar(dict):
        def __eq__(self, other: object) -> bool:
            return True

    with pytest.raises(values.NotPlainData):
        values.encode(Liar())
    with pytest.raises(values.NotPlainData):
        values.decode(["x", 1])
    with pytest.raises(values.NotPlainData):
        values.decode(["S", [["l", []]]])  # a set holding a list: unhashable
    with pytest.raises(values.NotPlainData):
        values.loads(b"[" * 100000)
    sample = {"a": [1, (2.5, None)], "b": {frozenset({b"z"})}, 3: "x\udc80"}
    assert values.loads(values.dumps(sample)) == sample
    assert bounded_repr(10**100000, 50).startswith("<int with about")
    assert bounded_repr("x" * 10**6, 50) == "'" + "x" * 48 + "…(+999952 chars)"
