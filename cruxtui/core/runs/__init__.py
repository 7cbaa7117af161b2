"""Model runs: the SQLite store, the async runner, the run session shared by CLI and TUI, import, comparison."""
