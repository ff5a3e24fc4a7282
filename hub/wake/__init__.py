"""wake."""
