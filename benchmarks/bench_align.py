"""How well does `cruxtui.core.reasoning.alignment` find the first wrong step of a chain of thought?

Builds the corpus of `benchmarks/align_corpus.py` (true traces of the 800 samples, narrated in
varied prose; one injected slip per wrong chain; several seeds pooled) and reports:

- **localisation accuracy**: wrong chains whose first divergence falls in the injected wrong step
  (goal >= 90%), with how many were flagged too early (a false alarm before the slip), too late,
  or not at all;
- **false-alarm rate**: correct chains with any contradicted claim (goal <= 5%);

overall, for the phrasing families visible while the parser was written (A-D) and for the held-out
families (E, F), and per slip kind; and how often the true value reported for a located wrong
binding is the real one. Run: `python benchmarks/bench_align.py [--seeds 0,1,2] [--show 5]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from align_corpus import HELD_OUT, make_corpus, trace_samples  # noqa: E402

from cruxtui.core.reasoning.alignment import align_text, value_key  # noqa: E402


def scratchpad_figures(samples: list, traces: dict, seeds: list[int]) -> None:
    """Scratchpads: the one a perfect model writes (prompts.scratchpad_from_trace) must not alarm;
    one entry changed (a binding's value perturbed, or a condition flipped) must be found exactly."""
    import random

    from align_corpus import perturb

    from cruxtui.core.models.prompts import scratchpad_from_trace
    from cruxtui.core.reasoning.chain_parse import literal_value

    correct = alarms = wrong = located = 0
    for seed in seeds:
        rng = random.Random(seed)
        for s in samples:
            tr = traces[s.id]
            pad = scratchpad_from_trace(tr) if tr.ok else None
            if pad is None:
                continue
            if seed == seeds[0]:
                correct += 1
                alarms += (
                    align_text(f"[SCRATCHPAD]\n{pad}\n[/SCRATCHPAD]", tr).first_divergence
                    is not None
                )
            entries = pad.splitlines()
            options = [
                i for i, e in enumerate(entries) if e.startswith("line ") and "(no change)" not in e
            ]
            if not options:
                continue
            i = rng.choice(options)
            head, _, rest = entries[i].partition(": ")
            if rest.endswith(("-> True", "-> False")):
                changed = rest[: rest.rindex("->")] + (
                    "-> False" if rest.endswith("True") else "-> True"
                )
            else:
                name, _, value = rest.split(";")[0].partition(" = ")
                obj = literal_value(value)
                new = perturb(obj, rng) if type(obj).__name__ != "_Bad" else None
                if new is None or new == obj:
                    continue
                changed = f"{name} = {new!r}"
            entries[i] = f"{head}: {changed}"
            div = align_text(
                "[SCRATCHPAD]\n" + "\n".join(entries) + "\n[/SCRATCHPAD]", tr
            ).first_divergence
            wrong += 1
            located += div is not None and div.step == i
    print(
        f"scratchpads: {100 * located / max(wrong, 1):.1f}% of {wrong} changed entries found exactly; "
        f"false alarms on {correct} faithful scratchpads: {100 * alarms / max(correct, 1):.1f}%"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--seeds", default="0,1,2", help="corpora to build and pool (comma-separated seeds)"
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first N samples")
    ap.add_argument("--show", type=int, default=0, help="print N misses of each sort")
    args = ap.parse_args()

    t0 = time.perf_counter()
    samples, traces = trace_samples(args.limit)
    t_trace = time.perf_counter() - t0
    seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    corpus = [row for seed in seeds for row in make_corpus(samples, traces, seed)]
    t_build = time.perf_counter() - t0 - t_trace

    stats: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    misses: dict[str, list[str]] = defaultdict(list)
    t1 = time.perf_counter()
    for row in corpus:
        result = align_text(row["text"], traces[row["id"]])
        div = result.first_divergence
        held = "held-out" if row["family"] in HELD_OUT else "visible"
        groups = ["all", held]
        if row["kind"] == "correct":
            for g in groups:
                stats[g]["correct"] += 1
                stats[g]["false_alarm"] += div is not None
            if div is not None:
                misses["false alarm"].append(
                    f"{row['id']} [{row['family']}] {div.claim.text!r} "
                    f"true {div.true_value}\n{row['text']}"
                )
            continue
        kind = row["kind"].split(":")[0]
        groups.append(f"slip {kind}")
        lo, hi = row["wrong_span"]
        if div is None:
            verdict = "missed"
        else:
            step = result.chain.steps[div.step]
            if step.start < hi and step.end > lo:
                verdict = "located"
            elif step.end <= lo:
                verdict = "early"
            else:
                verdict = "late"
        for g in groups:
            stats[g]["wrong"] += 1
            stats[g][verdict] += 1
        if verdict == "located" and row.get("true_value") and div.claim.kind == "binding":
            stats["all"]["true_checked"] += 1
            stats["all"]["true_right"] += value_key(div.true_value or "") == value_key(
                row["true_value"]
            )
        if verdict != "located":
            misses[verdict].append(
                f"{row['id']} [{row['family']}] {row['kind']} slip: {row['wrong_text']!r}"
                + (f" | flagged: {div.claim.text!r}" if div else "")
                + f"\n{row['text']}"
            )
    t_align = time.perf_counter() - t1

    print(
        f"corpus: {len(corpus)} chains from {len(traces)} samples, seeds {seeds} "
        f"(traced in {t_trace:.1f} s, built in {t_build:.1f} s; aligned in {t_align:.1f} s, "
        f"{1000 * t_align / max(len(corpus), 1):.1f} ms per chain)"
    )
    print(
        f"{'group':<18}{'wrong':>7}{'located':>9}{'early':>7}{'late':>6}{'missed':>8}"
        f"{'correct':>9}{'false alarm':>13}"
    )
    for g in sorted(stats, key=lambda k: (k != "all", k.startswith("slip"), k)):
        s = stats[g]
        w, c = s["wrong"], s["correct"]
        loc = f"{100 * s['located'] / w:.1f}%" if w else "-"
        fa = f"{100 * s['false_alarm'] / c:.1f}%" if c else "-"
        print(f"{g:<18}{w:>7}{loc:>9}{s['early']:>7}{s['late']:>6}{s['missed']:>8}{c:>9}{fa:>13}")
    a = stats["all"]
    print(
        f"\nlocalisation accuracy {100 * a['located'] / max(a['wrong'], 1):.1f}% (goal >= 90%), "
        f"false-alarm rate {100 * a['false_alarm'] / max(a['correct'], 1):.1f}% (goal <= 5%)"
    )
    scratchpad_figures(samples, traces, seeds)
    if a["true_checked"]:
        print(
            f"true value reported right for {100 * a['true_right'] / a['true_checked']:.1f}% of "
            f"{a['true_checked']} located wrong bindings"
        )
    if args.show:
        for kind, rows in misses.items():
            print(f"\n===== {kind} ({len(rows)})")
            for r in rows[: args.show]:
                print("--", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
