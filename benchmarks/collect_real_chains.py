"""Collect chains of thought from a real local model, for `bench_align.py` and the tests.

Start the real model first (`../shared/realmodel/serve.sh VENV PORT`), then run
`python benchmarks/collect_real_chains.py URL [N] [--seed S] [--out FILE]`: N random samples (seeded) get
cruxtui's own CoT prompt for the output task, and each reply is written as one JSON line
(`sample`, `task`, `call`, `text`, `model`). The chains are not labelled: they are used to check
where divergences come from (code in a chain must never give one).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.data.dataset import load_dataset  # noqa: E402
from cruxtui.core.models.prompts import build_prompt  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url")
    ap.add_argument("n", type=int, nargs="?", default=40)
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--seed", type=int, default=13, help="which samples (13: the stored set)")
    ap.add_argument("--dataset", default=str(REPO.parent / "shared" / "data" / "cruxeval.jsonl"))
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "real_chains" / "smollm2.jsonl"))
    args = ap.parse_args()
    import openai

    samples = random.Random(args.seed).sample(
        load_dataset(args.dataset, offline=True).samples, args.n
    )
    client = openai.OpenAI(base_url=args.url, api_key="not-needed", timeout=400, max_retries=0)
    with open(args.out, "a", encoding="utf-8") as out:
        for s in samples:
            prompt = build_prompt(s, "output", "cot", "chat")
            reply = client.chat.completions.create(
                model=args.model, messages=prompt.messages, temperature=0.2, max_tokens=320, seed=1
            )
            text = reply.choices[0].message.content or ""
            row = {
                "sample": s.id,
                "task": "output",
                "call": s.call,
                "text": text,
                "model": args.model,
            }
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(s.id, len(text), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
