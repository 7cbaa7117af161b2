"""The command line: `main.py` builds the parser, one `<name>_cmd.py` module per subcommand."""
