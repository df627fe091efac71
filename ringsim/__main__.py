"""python -m ringsim: the same as the ringsim command."""

from .cli import main

raise SystemExit(main())
