"""``python -m hub`` runs the CLI."""

from hub.cli.main import main

raise SystemExit(main())
