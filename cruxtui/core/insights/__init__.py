"""Insights: where a model fails, in numbers (slices of a scored set) and pictures (figures).

- `results`: any scored set (a stored run, a judged generations file, several runs pooled)
  reduced to what slicing needs: per sample, its generations and how many passed;
- `dimensions`: what a sample can be grouped by (method, output type, lines, numsteps,
  perturbation transform, prompt mode, tag);
- `slices`: per group samples, predictions, pass@1 with a bootstrap interval; against a second run,
  the paired difference and the contingency table (passes in one, fails in the other);
- `tables`: the same as JSON lines, CSV and Markdown;
- `figures`: matplotlib figures (optional extra `cruxtui[plots]`), imported only when drawing.
"""
