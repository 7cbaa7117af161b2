"""The Textual front end: a thin layer over `cruxtui.core`."""
