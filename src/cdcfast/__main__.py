"""`python -m cdcfast …` is the `cdcfast` command."""
import sys

from .cli import main

sys.exit(main())
