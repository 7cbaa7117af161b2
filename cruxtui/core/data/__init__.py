"""The benchmark's samples: loading with precise errors, where they come from, search."""
