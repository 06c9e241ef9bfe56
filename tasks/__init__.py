"""Pipeline steps as pure, typed functions; ``tasks.steps`` holds the thin Prefect wrappers."""
