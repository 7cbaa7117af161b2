"""One module per CLI subcommand; see `cruxtui.cli.COMMANDS`."""
