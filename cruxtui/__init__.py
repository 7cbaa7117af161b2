"""cruxtui: a terminal failure explorer for the CRUXEval benchmark."""

__version__ = "0.1.0"
