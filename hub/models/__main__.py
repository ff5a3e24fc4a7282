"""``python -m hub.models list|fetch|verify`` (the same as ``hub models ...``)."""

from hub.models.cli import main

raise SystemExit(main())
