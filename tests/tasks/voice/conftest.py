"""Shared fixtures: one small domain LM and recogniser per test session."""

from __future__ import annotations

import pytest

import tasks.voice  # noqa: F401  (registers the babble noise source)
from tasks.voice.corpus import domain_corpus
from tasks.voice.stt import Recognizer, SttSpec

# Our own template sentences (not reference data); the values in them are never tested.
TEMPLATES = [
    "Hi, I need to change my flight to March 25.",
    "My confirmation code is ZK3FFW.",
    "My employee ID is EMP048271.",
    "The last four digits of my phone are 7294.",
    "I can pay up to $120.",
    "I want to arrive by 4:00 PM.",
    "My date of birth is 1988-02-17.",
    "Yes, please book the window seat.",
    "No, that is all, thank you.",
    "Can you check if there is an earlier flight today?",
]


@pytest.fixture(scope="session")
def corpus() -> list[str]:
    return domain_corpus(TEMPLATES, 1500, seed=3)


@pytest.fixture(scope="session")
def recognizer(corpus, tmp_path_factory) -> Recognizer:
    cache = tmp_path_factory.mktemp("lm")
    return Recognizer(SttSpec(grammar="codes"), corpus, cache)
