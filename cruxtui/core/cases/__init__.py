"""Failure cases: the file format, building, replaying, rendering and gallery export."""
