"""Checks of a parsed run configuration that need more than the model: the configuration
a stored run id was first run with. Each raises :class:`tasks.config.ConfigError` naming the field and the
valid values, before anything is stored (no trial, no ``runs`` row).

Pure functions over the configuration (and the store's ``runs`` rows); no Prefect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks.config import BenchmarkConfig, ConfigError, config_differences

if TYPE_CHECKING:
    from tasks.store import Store

# ------------------------------------------------------------------------------ resume


def stored_config_json(store: Store, run_id: str) -> str | None:
    """The configuration a run was first stored with, or None for a new run id."""
    runs = store.read("runs", run_id)
    if not len(runs):
        return None
    return str(runs.sort_values("created_at")["config_json"].iloc[0])


def resume_config(
    store: Store, config: BenchmarkConfig, new_run_if_changed: bool = False
) -> BenchmarkConfig:
    """The configuration to run. Resuming a stored run id with another configuration would
    mix two configurations' results under one id: it is an error naming the fields that
    differ or, with ``new_run_if_changed``, a new run id (``<id>-<fingerprint>``, itself
    resumable)."""
    run_id = config.run_id or ""
    stored = stored_config_json(store, run_id)
    differences = config_differences(stored, config) if stored is not None else []
    if not differences:
        return config
    if new_run_if_changed:
        new_id = f"{run_id}-{config.fingerprint()[:8]}"
        return resume_config(store, config.model_copy(update={"run_id": new_id}))
    raise ConfigError(
        f"run {run_id!r} in {config.store} was stored with another configuration; "
        "resuming it would mix the two. Fields that differ:\n  "
        + "\n  ".join(differences)
        + "\nUse another --run-id, or --new-run-if-changed to start a new run id."
    )
