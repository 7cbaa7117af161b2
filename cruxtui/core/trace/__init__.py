"""Traced execution of a sample (parent side) and numsteps."""
