"""Small shared pieces: atomic writes, per-user folders, value encoding and bounded reprs."""
