"""How fast a gallery loads, exports and replays (no target in the issue; numbers for the record).

Run: `python benchmarks/bench_cases.py [N]` (default 1,000 cases). Builds N case files from the
example gallery in cases/ (same content, distinct identities) in a temporary folder, then times
loading them with validation, the HTML and Markdown exports, and replaying the example gallery
from its recorded responses (re-extracted and re-scored in the sandbox).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.cases.case_file import load_gallery, save_case  # noqa: E402
from cruxtui.core.cases.gallery import export_html, export_markdown  # noqa: E402
from cruxtui.core.cases.replay import replay_case  # noqa: E402


def timed(label: str, fn):  # noqa: ANN001, ANN201 - a tiny timing helper
    start = time.perf_counter()
    result = fn()
    print(f"{label:<44} {1000 * (time.perf_counter() - start):9.1f} ms")
    return result


def main(n: int) -> None:
    examples, errors = load_gallery(REPO / "cases")
    assert examples and not errors, errors
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)

        def write() -> None:
            for i in range(n):
                base = examples[i % len(examples)]
                case = replace(base, sample_id=f"{base.sample_id}~copy{i}", path=None)
                save_case(case, folder)

        timed(f"save {n} cases (atomic, fsync each)", write)
        cases, bad = timed(f"load {n} cases with validation", lambda: load_gallery(folder))
        assert len(cases) == n and not bad
        page = timed(f"export {n} cases to one HTML page", lambda: export_html(cases))
        md = timed(f"export {n} cases to Markdown", lambda: export_markdown(cases))
        print(
            f"{'HTML size / Markdown size':<44} {len(page) / 1e6:8.2f} MB / {len(md) / 1e6:.2f} MB"
        )

    async def replay_all() -> list:
        return [await replay_case(c, 5) for c in examples]

    reports = timed(
        f"replay the {len(examples)} example cases x5 (recorded)", lambda: asyncio.run(replay_all())
    )
    print("results:", ", ".join(f"{r.sample_id} {r.summary}" for r in reports))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
