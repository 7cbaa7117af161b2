"""The guided tour (`--demo`): what it shows and from what, as plain data the TUI drives."""
