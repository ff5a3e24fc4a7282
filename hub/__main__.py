"""``python -m hub`` runs the CLI."""

from hub.cli import main

raise SystemExit(main())
