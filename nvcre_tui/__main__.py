"""`python -m nvcre_tui` runs the `nvcre` command."""

import sys

from nvcre_tui.cli import main

sys.exit(main())
