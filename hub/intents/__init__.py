"""intents."""
