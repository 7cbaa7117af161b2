"""Isolated execution of untrusted code: the worker pool, and the jobs that run inside a check."""
