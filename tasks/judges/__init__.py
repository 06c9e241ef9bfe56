"""Judges of the judged metrics: a registry with an ``offline`` (default) and an ``llm``
back-end behind one interface (:class:`~tasks.judges.base.Judge`).

    judge = make_judge("offline")               # or JudgeConfig(name="llm", params={...})
    verdict = judge.evaluate(JudgeTask(metric="faithfulness", inputs=ConversationInput(...)))
"""

from __future__ import annotations

from tasks.judges import llm, offline
from tasks.judges.base import (
    DEFAULT_JUDGE,
    JUDGES,
    AudioInput,
    Judge,
    JudgeConfig,
    JudgeInput,
    JudgeTask,
    JudgeVerdict,
    TokenUsage,
    make_judge,
    prompt_hash,
    resolve_judge,
)
from tasks.judges.llm import LLMJudge, LLMJudgeParams
from tasks.judges.offline import OFFLINE_RULES, OfflineJudge

__all__ = [
    "DEFAULT_JUDGE",
    "JUDGES",
    "OFFLINE_RULES",
    "AudioInput",
    "Judge",
    "JudgeConfig",
    "JudgeInput",
    "JudgeTask",
    "JudgeVerdict",
    "LLMJudge",
    "LLMJudgeParams",
    "OfflineJudge",
    "TokenUsage",
    "llm",
    "make_judge",
    "offline",
    "prompt_hash",
    "resolve_judge",
]
