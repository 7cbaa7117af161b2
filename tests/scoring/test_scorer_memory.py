"""The scorer's memory does not grow with the file: each decoded value is dropped once compared.

Measured in a fresh process per file (peak RSS of the scorer itself, the sandbox's workers not
counted): a file of 60 predictions that each produce a 4 MB string peaks within 100 MB of a file
of 12 of them. Keeping every value until the whole file is scored (as before) adds ~190 MB.
"""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

_SCORE = """
import resource, sys
from cruxtui.core.data.dataset import Sample
from cruxtui.core.sandbox.pool import Sandbox
from cruxtui.core.scoring.verdicts import check_many
sample = Sample("s", "def f(s):\\n    return s[::-1]", "'abc'", "'cba'")
pairs = [(sample, f"'x' * 4_000_000 + '{i}'") for i in range(int(sys.argv[1]))]
with Sandbox(workers=2) as box:
    verdicts = check_many(pairs, "output", box)
assert [v.kind for v in verdicts] == ["wrong"] * len(pairs), {v.kind for v in verdicts}
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _peak_mb(predictions: int) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _SCORE, str(predictions)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.split()[-1])


def test_peak_memory_does_not_grow_with_the_number_of_large_results() -> None:
    small, large = _peak_mb(12), _peak_mb(60)
    assert large < small + 100, (small, large)
