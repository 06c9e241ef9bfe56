"""tasks.voice.corpus: templated LM sentences keep the shapes, not the values."""

from __future__ import annotations

import re

import pytest

from tasks.spoken import extract_entities, normalize_spoken
from tasks.voice.corpus import domain_corpus

from .conftest import TEMPLATES


def test_corpus_is_deterministic_in_the_seed() -> None:
    assert domain_corpus(TEMPLATES, 200, seed=1) == domain_corpus(TEMPLATES, 200, seed=1)
    assert domain_corpus(TEMPLATES, 200, seed=1) != domain_corpus(TEMPLATES, 200, seed=2)
    assert len(domain_corpus(TEMPLATES, 57, seed=1)) == 57


def test_corpus_never_contains_the_template_values(corpus: list[str]) -> None:
    values = {e.value for t in TEMPLATES for e in extract_entities(t)}
    assert values  # the templates do contain entities
    heard = {tok for sentence in corpus for tok in normalize_spoken(sentence).split()}
    assert not values & heard


def test_corpus_keeps_entity_shapes(corpus: list[str]) -> None:
    tokens = [tok for s in corpus for tok in normalize_spoken(s).split()]
    assert any(re.fullmatch(r"EMP\d{6}", t) for t in tokens)
    assert any(re.fullmatch(r"[A-Z0-9]{6}", t) and not t.startswith("EMP") for t in tokens)
    assert any(re.fullmatch(r"\$\d+(\.\d\d)?", t) for t in tokens)
    assert any(re.fullmatch(r"\d{4}-\d{2}-\d{2}", t) for t in tokens)
    assert not any(ch.isdigit() for s in corpus for ch in s)  # spoken form only


def test_corpus_mixes_spelling_styles(corpus: list[str]) -> None:
    text = " ".join(corpus).lower()
    assert "foxtrot" in text or "kilo" in text or "whiskey" in text
    assert re.search(r"\b[a-z] [a-z] [a-z]\b", text)


def test_corpus_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="positive"):
        domain_corpus(TEMPLATES, 0, seed=1)
    with pytest.raises(ValueError, match="no non-empty"):
        domain_corpus(["", " "], 10, seed=1)
