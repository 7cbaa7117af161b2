"""How long `cruxtui serve` takes to show the first screen in a browser tab, beside the terminal.

Side by side in one run:
- **browser**: a new tab of headless Chromium (Playwright, Debian's chromium) opens the served
  page; timed from the navigation's start to the moment xterm.js holds the full Browse screen
  (the first sample id and the `N of N shown` status line), read from the terminal buffer on
  every animation frame. The page's own milestones are reported too: page loaded, websocket
  open (the tab's app process starts), first bytes of screen;
- **terminal**: process start to first paint of the same screen, headless
  (benchmarks/_first_paint.py, as bench_startup.py times it).

The ratio is the cost of the browser path over the terminal one: the page, textual.js, the
websocket, and an app process per tab. Usage:
python benchmarks/bench_serve.py [DATASET] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_startup import DEFAULT, once  # noqa: E402

from cruxtui.core.data.dataset import load_dataset  # noqa: E402
from cruxtui.testing.served import ServedTui, launch_chromium, open_tab  # noqa: E402

MILESTONES = """
window.cruxtuiMarks = {};
new MutationObserver(() => {
  const body = document.body;
  if (!body) return;
  for (const name of ["-loaded", "-first-byte"]) {
    if (body.classList.contains(name) && !(name in window.cruxtuiMarks)) {
      window.cruxtuiMarks[name] = performance.now();
    }
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["class"]});
"""

FIRST_SCREEN = """([needles]) => {
  const term = window.cruxtuiTerminal;
  if (!term) return false;
  const buffer = term.buffer.active;
  let text = "";
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    text += (line ? line.translateToString(true) : "") + "\\n";
  }
  return needles.every((n) => text.includes(n)) ? performance.now() : false;
}"""


def browser_runs(dataset: str, runs: int) -> list[dict[str, float]]:
    from playwright.sync_api import sync_playwright

    samples = load_dataset(dataset, offline=True)
    needles = [samples.samples[0].id, f"{len(samples)} of {len(samples)} shown"]
    out = []
    with ServedTui("--dataset", dataset, "--no-step-counts") as served, sync_playwright() as pw:
        browser = launch_chromium(pw)
        for i in range(runs + 1):  # the first tab warms Chromium's caches and the OS's
            context = browser.new_context()  # nothing cached from the tab before
            context.add_init_script(MILESTONES)
            page = open_tab(context, served.url)
            shown = page.wait_for_function(
                FIRST_SCREEN, arg=[needles], polling="raf", timeout=60_000
            )
            timing = page.evaluate(
                "() => { const n = performance.getEntriesByType('navigation')[0];"
                " return {load: n.loadEventEnd, marks: window.cruxtuiMarks}; }"
            )
            if i:
                out.append(
                    {
                        "page loaded": timing["load"] / 1000,
                        "websocket open": timing["marks"].get("-loaded", 0) / 1000,
                        "first bytes": timing["marks"].get("-first-byte", 0) / 1000,
                        "first screen": float(shown.json_value()) / 1000,
                    }
                )
            context.close()
        browser.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?", default=str(DEFAULT))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print the numbers as one JSON object")
    args = ap.parse_args()
    once(args.dataset)  # warm the OS file cache and .pyc files
    terminal = [once(args.dataset)[0] for _ in range(args.runs)]
    browser = browser_runs(args.dataset, args.runs)
    median = {k: statistics.median(r[k] for r in browser) for k in browser[0]}
    term = statistics.median(terminal)
    if args.json:
        print(json.dumps({"browser": median, "terminal first paint": term}))
        return
    print(f"served page, median of {args.runs} new tabs (from navigation start):")
    for name, value in median.items():
        print(f"  {name:15} {value:6.3f} s")
    worst = max(r["first screen"] for r in browser)
    print(
        f"  (first screen: min {min(r['first screen'] for r in browser):.3f} s, max {worst:.3f} s)"
    )
    print(f"terminal, process start to first paint: median {term:.3f} s")
    print(f"ratio browser / terminal: {median['first screen'] / term:.2f}")


if __name__ == "__main__":
    main()
