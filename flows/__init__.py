"""Prefect flows (orchestration only) and the ``evaflow`` command line."""
