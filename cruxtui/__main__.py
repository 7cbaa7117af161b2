"""`python -m cruxtui`: the same as the `cruxtui` command."""

import sys

from cruxtui.cli.main import main

sys.exit(main())
