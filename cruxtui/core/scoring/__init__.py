"""Judging predictions: verdicts with reasons, the official-compatible check, answers, pass@k, generations files."""
