"""The ``prices``, ``usage`` and ``costs`` SQL views, registered on every store connection.

``usage``: one row per (attempt, role, component, model, unit) quantity, read from what the
attempt stored: ``usage`` events (speech-to-speech adapters, the Pipecat bot, any agent
that reports them, the realtime caller), ``llm_call`` events (the ``llm`` agent and
caller) and the ``judge_usage`` an LLM judge stores in its metric details. Token counts
in events are gross (audio and cached tokens are inside ``input_tokens``); the view splits
them into the units the price table prices.

``reported_cost`` is the cost LiteLLM reported for a model call (a judge's ``cost_usd``,
an event's ``cost_usd``), on the call's ``input_token`` row (0 on its other rows).

``costs``: one row per attempt (regenerated attempts included: what the run really cost)
with its agent / simulator / judge cost and total. The price table prices every model it
lists; a model it does not list at all is priced by LiteLLM's reported cost when the call
has one (``litellm_priced`` names those models). A side's cost is NULL when any of its
usage is still unpriced or a metered component it used reported no usage
(:mod:`tasks.costs.components`); ``unpriced`` names each. Offline components cost 0.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pyarrow as pa

from tasks.costs.components import COLUMNS, run_components
from tasks.costs.prices import PRICES_ENV, PriceError, PriceTable, load_prices

log = logging.getLogger(__name__)

PRICE_JSON_TYPE = (
    '[{"provider":"VARCHAR","model":"VARCHAR","unit":"VARCHAR","price":"DOUBLE",'
    '"per":"DOUBLE","unit_price":"DOUBLE","currency":"VARCHAR","as_of":"VARCHAR",'
    '"source":"VARCHAR"}]'
)
JUDGE_JSON_TYPE = (
    '[{"model":"VARCHAR","input_tokens":"DOUBLE","output_tokens":"DOUBLE",'
    '"input_audio_tokens":"DOUBLE","cached_input_tokens":"DOUBLE","cost_usd":"DOUBLE"}]'
)
PRICE_COLUMNS = ["provider", "model", "unit", "price", "per", "unit_price", "currency", "as_of"]

USAGE_SQL = """
CREATE VIEW usage AS
WITH ev AS (
    SELECT run_id, attempt_id,
        CASE WHEN source = 'caller' THEN 'simulator' ELSE 'agent' END AS role,
        coalesce(data_json->>'component', CASE WHEN kind = 'llm_call' THEN 'llm' END,
                 'realtime') AS component,
        data_json->>'provider' AS provider,
        data_json->>'model' AS model,
        TRY_CAST(data_json->>'input_tokens' AS DOUBLE) AS n_in,
        TRY_CAST(data_json->>'output_tokens' AS DOUBLE) AS n_out,
        TRY_CAST(data_json->>'input_audio_tokens' AS DOUBLE) AS n_in_audio,
        TRY_CAST(data_json->>'output_audio_tokens' AS DOUBLE) AS n_out_audio,
        TRY_CAST(data_json->>'cached_input_tokens' AS DOUBLE) AS n_cached,
        TRY_CAST(data_json->>'cached_input_audio_tokens' AS DOUBLE) AS n_cached_audio,
        TRY_CAST(data_json->>'stt_seconds' AS DOUBLE) AS stt_second,
        TRY_CAST(data_json->>'tts_characters' AS DOUBLE) AS tts_character,
        TRY_CAST(data_json->>'tts_seconds' AS DOUBLE) AS tts_second,
        TRY_CAST(data_json->>'call_seconds' AS DOUBLE) AS call_second,
        TRY_CAST(data_json->>'cost_usd' AS DOUBLE) AS reported_usd
    FROM events WHERE kind IN ('usage', 'llm_call')
),
judged AS (
    SELECT run_id, attempt_id, 'judge' AS role, 'llm' AS component,
        NULL::VARCHAR AS provider, j.model AS model,
        j.input_tokens AS n_in, j.output_tokens AS n_out,
        nullif(j.input_audio_tokens, 0) AS n_in_audio,
        nullif(j.cached_input_tokens, 0) AS n_cached, j.cost_usd AS reported_usd
    FROM (
        SELECT run_id, attempt_id,
            unnest(from_json(details_json->'judge_usage', '{judge_type}')) AS j
        FROM metrics WHERE details_json LIKE '%judge_usage%'
    )
),
counted AS (
    SELECT *,
        n_in - coalesce(n_in_audio, 0) - coalesce(n_cached, 0) AS input_token,
        n_cached AS cached_input_token,
        n_in_audio - coalesce(n_cached_audio, 0) AS audio_input_token,
        n_cached_audio AS cached_audio_input_token,
        n_out - coalesce(n_out_audio, 0) AS output_token,
        n_out_audio AS audio_output_token
    FROM (SELECT * FROM ev UNION ALL BY NAME SELECT * FROM judged)
)
SELECT run_id, attempt_id, role, component, provider, model, unit, quantity,
    CASE WHEN reported_usd IS NULL THEN NULL WHEN unit = 'input_token' THEN reported_usd
        ELSE 0 END AS reported_cost
FROM (
    SELECT run_id, attempt_id, role, component, provider, model, reported_usd,
        input_token, cached_input_token, audio_input_token, cached_audio_input_token,
        output_token, audio_output_token, stt_second, tts_character, tts_second, call_second
    FROM counted
) UNPIVOT (quantity FOR unit IN (
    input_token, cached_input_token, audio_input_token, cached_audio_input_token,
    output_token, audio_output_token, stt_second, tts_character, tts_second, call_second
))
"""

COSTS_SQL = """
CREATE VIEW costs AS
WITH listed AS (SELECT DISTINCT run_id, model FROM prices),
priced AS (
    SELECT u.*, p.unit_price,
        CASE WHEN p.unit_price IS NOT NULL THEN u.quantity * p.unit_price
            WHEN l.model IS NULL THEN u.reported_cost END AS cost
    FROM usage u LEFT JOIN prices p
        ON p.run_id = u.run_id AND p.model = u.model AND p.unit = u.unit
    LEFT JOIN listed l ON l.run_id = u.run_id AND l.model = u.model
),
unreported AS (
    SELECT t.run_id, t.attempt_id, c.role, c.component, c.provider, c.model
    FROM trials t JOIN _cost_components c
        ON c.run_id = t.run_id AND (c.system IS NULL OR c.system = t.system)
    WHERE NOT EXISTS (
        SELECT 1 FROM usage u
        WHERE u.run_id = t.run_id AND u.attempt_id = t.attempt_id AND u.role = c.role
            AND (c.model IS NULL OR u.model = c.model)
    )
),
issues AS (
    SELECT DISTINCT run_id, attempt_id, role,
        coalesce(model, '(no model)') || ' ' || unit AS what
    FROM priced WHERE cost IS NULL AND quantity > 0
    UNION ALL
    SELECT run_id, attempt_id, role,
        coalesce(model, provider) || ' (' || component || ': no usage reported)' AS what
    FROM unreported
),
spent AS (
    SELECT run_id, attempt_id,
        sum(cost) FILTER (WHERE role = 'agent') AS agent,
        sum(cost) FILTER (WHERE role = 'simulator') AS simulator,
        sum(cost) FILTER (WHERE role = 'judge') AS judge
    FROM priced GROUP BY run_id, attempt_id
),
fallback AS (
    SELECT run_id, attempt_id,
        string_agg(DISTINCT role || ': ' || model, '; ' ORDER BY role || ': ' || model)
            AS litellm_priced
    FROM priced WHERE unit_price IS NULL AND cost IS NOT NULL AND quantity > 0
    GROUP BY run_id, attempt_id
),
missing AS (
    SELECT run_id, attempt_id,
        count(*) FILTER (WHERE role = 'agent') AS agent,
        count(*) FILTER (WHERE role = 'simulator') AS simulator,
        count(*) FILTER (WHERE role = 'judge') AS judge,
        string_agg(role || ': ' || what, '; ' ORDER BY role, what) AS unpriced
    FROM issues GROUP BY run_id, attempt_id
),
sides AS (
    SELECT t.run_id, t.attempt_id, t.trial_key, t.system, t.scenario_id, t.domain,
        t.condition, t.trial, t.attempt, t.final, t.valid, t.status,
        CASE WHEN coalesce(m.agent, 0) > 0 THEN NULL ELSE coalesce(s.agent, 0) END
            AS agent_cost,
        CASE WHEN coalesce(m.simulator, 0) > 0 THEN NULL ELSE coalesce(s.simulator, 0) END
            AS simulator_cost,
        CASE WHEN coalesce(m.judge, 0) > 0 THEN NULL ELSE coalesce(s.judge, 0) END
            AS judge_cost,
        m.unpriced, f.litellm_priced
    FROM trials t
    LEFT JOIN spent s ON s.run_id = t.run_id AND s.attempt_id = t.attempt_id
    LEFT JOIN missing m ON m.run_id = t.run_id AND m.attempt_id = t.attempt_id
    LEFT JOIN fallback f ON f.run_id = t.run_id AND f.attempt_id = t.attempt_id
)
SELECT sides.*, agent_cost + simulator_cost + judge_cost AS total_cost,
    coalesce(v.price_table, '{current_version}') AS price_table
FROM sides LEFT JOIN _price_versions v ON v.run_id = sides.run_id
"""


def register_cost_views(con: Any) -> None:
    """Add ``prices``, ``usage`` and ``costs`` to a connection that has the store's views."""
    override = os.environ.get(PRICES_ENV)
    try:
        current = load_prices()
    except PriceError as exc:
        # The store stays queryable; every price from the current table is missing (NULL).
        log.warning("%s", exc)
        current = PriceTable()
    con.register("_current_prices", _price_rows(current))
    runs = con.execute("SELECT run_id, specs_json FROM runs").fetchall()
    components = [c.model_dump() for run_id, specs in runs for c in run_components(run_id, specs)]
    con.register("_cost_components", _frame(components, COLUMNS))
    stored = f"price_table_json IS NOT NULL AND NOT {bool(override)}"
    con.execute(
        f"""CREATE VIEW prices AS
        SELECT run_id, unnest(from_json(price_table_json, '{PRICE_JSON_TYPE}'), recursive := true)
        FROM runs WHERE {stored}
        UNION ALL BY NAME
        SELECT r.run_id, p.* FROM (
            SELECT run_id FROM trials UNION SELECT run_id FROM runs
            EXCEPT SELECT run_id FROM runs WHERE {stored}
        ) r CROSS JOIN _current_prices p"""
    )
    con.execute(
        f"CREATE VIEW _price_versions AS SELECT run_id, any_value(price_table_version) AS "
        f"price_table FROM runs WHERE {stored} GROUP BY run_id"
    )
    con.execute(USAGE_SQL.replace("{judge_type}", JUDGE_JSON_TYPE))
    con.execute(COSTS_SQL.replace("{current_version}", current.version_id))


def _price_rows(table: PriceTable) -> pa.Table:
    rows = [{**r.model_dump(), "unit_price": r.unit_price} for r in table.prices]
    return _frame(rows, [*PRICE_COLUMNS, "source"])


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pa.Table:
    numeric = {"price", "per", "unit_price"}
    schema = pa.schema([(c, pa.float64() if c in numeric else pa.string()) for c in columns])
    return pa.table({c: [row.get(c) for row in rows] for c in columns}, schema=schema)
