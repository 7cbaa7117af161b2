"""Test helpers shipped with the package, so tests, benchmarks and demos share them."""
