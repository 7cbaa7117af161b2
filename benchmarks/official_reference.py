"""The benchmark's own scoring design, re-implemented faithfully, as a baseline and a reference.

CRUXEval's scorer splices each prediction into `{code}\\nassert {output} == {prediction}` and runs
that program in a fresh process per prediction: a `multiprocessing.Manager` list for the result, a
`multiprocessing.Process` that execs the program in a temp dir with a 3 s `setitimer` alarm and
dangerous `os` functions set to None, `join(timeout + 1)`, kill if still alive; pass = the child
reported "passed". Samples are spread over a `ProcessPoolExecutor`. Pre-filters: input-task
predictions without `f(` fail, output-task predictions containing `f(<input>)` fail.

Used by `bench_scoring.py` (speed baseline) and the tests (verdict reference). It runs predictions
with almost no protection, exactly like the original: only feed it benign files.

Also here: `synthetic_input_generations`, an input-task generations file built from the dataset's
own inputs plus wrong, broken and splice-sensitive variants, for testing the input task.
"""

from __future__ import annotations

import ast
import contextlib
import io
import multiprocessing
import os
import random
import signal
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout("timed out")


def _disable_dangerous_functions() -> None:
    """As the original: not a sandbox, just None-ing out the obvious foot-guns."""
    import builtins
    import shutil
    import subprocess

    builtins.exit = None  # type: ignore[assignment]
    builtins.quit = None  # type: ignore[assignment]
    for name in (
        "kill",
        "system",
        "putenv",
        "remove",
        "removedirs",
        "rmdir",
        "fchdir",
        "setuid",
        "fork",
        "forkpty",
        "killpg",
        "rename",
        "renames",
        "truncate",
        "replace",
        "unlink",
        "fchmod",
        "fchown",
        "chmod",
        "chown",
        "chroot",
        "lchown",
        "getcwd",
        "chdir",
    ):
        setattr(os, name, None)
    shutil.rmtree = None  # type: ignore[assignment]
    shutil.move = None  # type: ignore[assignment]
    subprocess.Popen = None  # type: ignore[assignment,misc]


class _WriteOnly(io.StringIO):
    def read(self, *args: Any, **kwargs: Any) -> str:
        raise OSError

    def readline(self, *args: Any, **kwargs: Any) -> str:
        raise OSError

    def readable(self, *args: Any, **kwargs: Any) -> bool:
        return False


def _execute(program: str, result: Any, timeout: float) -> None:
    import shutil

    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        needed_for_cleanup = shutil.rmtree, os.rmdir, os.chdir
        _disable_dangerous_functions()
        stream = _WriteOnly()
        try:
            with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
                signal.signal(signal.SIGALRM, _alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
                try:
                    exec(compile(program, "<program>", "exec", dont_inherit=True), {})
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            result.append("passed")
        except _Timeout:
            result.append("timed out")
        except BaseException as exc:  # noqa: BLE001 - the original catches everything too
            result.append(f"failed: {exc}")
        shutil.rmtree, os.rmdir, os.chdir = needed_for_cleanup


def check_program(program: str, timeout: float = 3.0) -> bool:
    """One prediction, one fresh process (plus its Manager server process), as the original."""
    manager = multiprocessing.Manager()
    try:
        result = manager.list()
        process = multiprocessing.Process(target=_execute, args=(program, result, timeout))
        process.start()
        process.join(timeout=timeout + 1)
        if process.is_alive():
            process.kill()
            process.join()
        return bool(result) and result[0] == "passed"
    finally:
        manager.shutdown()


def score_sample(args: tuple[Sequence[str], tuple[str, str, str], str]) -> list[bool]:
    predictions, (code, given_input, output), mode = args
    verdicts = []
    for prediction in predictions:
        if (mode == "input" and "f(" not in prediction) or (
            mode == "output" and f"f({given_input})" in prediction
        ):
            verdicts.append(False)
        else:
            verdicts.append(check_program(f"{code}\nassert {output} == {prediction}", 3))
    return verdicts


def score(
    generations: dict[str, list[str]], rows: dict[str, dict[str, str]], mode: str
) -> dict[str, list[bool]]:
    """Official-style verdicts for every sample of `generations` (`rows`: dataset rows by id)."""
    ids = list(generations)
    work = [
        (generations[i], (rows[i]["code"], rows[i]["input"], rows[i]["output"]), mode) for i in ids
    ]
    with ProcessPoolExecutor() as pool:
        return dict(zip(ids, pool.map(score_sample, work), strict=True))


def synthetic_input_generations(
    rows: dict[str, dict[str, str]], seed: int = 0
) -> dict[str, list[str]]:
    """Ten input-task predictions per sample: right, reformatted, wrong, broken and splice-sensitive.

    - `f(<input>)` and the same arguments re-printed by `ast.unparse` (both pass);
    - `f(*[<input>])`: arguments containing code (evaluated apart from f);
    - another sample's input, `f()`, and a nudged first argument (wrong or raising);
    - `f(<input>) or True` and `f(<input>) == <output>`: the spliced check passes, ours does not;
    - the bare input without `f(`, and a comment after the call.
    """
    rng = random.Random(seed)
    inputs = [row["input"] for row in rows.values()]
    out: dict[str, list[str]] = {}
    for sample_id, row in rows.items():
        given = row["input"]
        try:
            call = ast.parse(f"f({given})", mode="eval").body
            unparsed = ast.unparse(call)
        except SyntaxError:
            unparsed = f"f({given})"
        out[sample_id] = [
            f"f({given})",
            unparsed,
            f"f(*[{given}])",
            f"f({rng.choice(inputs)})",
            "f()",
            f"f({_nudged(given)})",
            f"f({given}) or True",
            f"f({given}) == {row['output']}",
            given,
            f"f({given})  # the call",
        ]
    return out


def _nudged(given: str) -> str:
    """The input with its first argument changed a little (a plausible wrong answer)."""
    try:
        call = ast.parse(f"f({given})", mode="eval").body
    except SyntaxError:
        return given
    assert isinstance(call, ast.Call)
    if not call.args:
        return given
    first = call.args[0]
    try:
        value = ast.literal_eval(first)
    except ValueError:
        return given
    if isinstance(value, bool):
        changed: Any = not value
    elif isinstance(value, int):
        changed = value + 1
    elif isinstance(value, str):
        changed = value + "x"
    elif isinstance(value, list):
        changed = value[:-1] if value else [0]
    elif isinstance(value, dict):
        changed = {**value, "extra": 1}
    else:
        return given
    call.args[0] = (
        ast.Constant(changed)
        if not isinstance(changed, list | dict)
        else ast.parse(repr(changed), mode="eval").body
    )
    return ast.unparse(call)[2:-1]
