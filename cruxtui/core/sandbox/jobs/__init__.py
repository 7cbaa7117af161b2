"""Code that runs inside a sandboxed check. Import-light by rule (an import-linter contract): only the standard library and `cruxtui.core.util.values`."""
