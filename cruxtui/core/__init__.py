"""Core logic of cruxtui: plain Python, never Textual (a test enforces it)."""
