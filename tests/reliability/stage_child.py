"""Body of an ``evaflow run`` child that reports its stages (``python -c`` entry point).

Prints ``SIMULATE <attempt_id>`` for every attempt simulated and ``JUDGING <attempt_id>``
for every kept attempt judged; with ``block_at`` N the Nth judging prints ``STUCK
<attempt_id>`` and never returns, so the parent can SIGKILL the run mid-judging.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def child_main(argv: list[str], block_at: int | None = None) -> None:
    import tasks.scoring as scoring
    import tasks.simulation as simulation
    from flows.cli import main

    simulate, judge = simulation.simulate_attempt, scoring.judge_scores
    judged = [0]

    def reporting_simulate(spec: Any, scenario: Any, attempt: int) -> Any:
        print("SIMULATE", spec.attempt_id(attempt), flush=True)
        return simulate(spec, scenario, attempt)

    def reporting_judge(spec: Any, scenario: Any, record: Any, scores: Any) -> Any:
        judged[0] += 1
        print("JUDGING", record.attempt_id, flush=True)
        if judged[0] == block_at:
            print("STUCK", record.attempt_id, flush=True)
            time.sleep(3600)  # the parent kills the run here
        return judge(spec, scenario, record, scores)

    simulation.simulate_attempt = reporting_simulate
    scoring.judge_scores = reporting_judge
    sys.exit(main(argv))
