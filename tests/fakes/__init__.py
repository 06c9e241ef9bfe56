"""Local fakes of the model services the systems talk to (tests only)."""
