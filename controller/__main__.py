"""``python -m controller`` is ``table-controller``."""

from controller.cli import main

raise SystemExit(main())
