"""Invented people: callers, colleagues and fellow passengers, with personas.

Name pools avoid words that also occur in ordinary sentences ("Will", "May", "Stone"):
the caller's names are turned into placeholders by plain text substitution, so a name
that is also a word would swallow that word.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Gender = Literal["woman", "man"]
GENDERS: tuple[Gender, ...] = ("woman", "man")

WOMEN = [
    "Adaeze",
    "Beatriz",
    "Camila",
    "Daniela",
    "Elif",
    "Farah",
    "Giulia",
    "Hana",
    "Ingrid",
    "Jasmine",
    "Keiko",
    "Lucia",
    "Marisol",
    "Nadia",
    "Oksana",
    "Priya",
    "Rosalind",
    "Saanvi",
    "Tamsin",
    "Ulrike",
    "Valentina",
    "Wren",
    "Ximena",
    "Yasmin",
    "Zainab",
    "Anneliese",
    "Bronwyn",
    "Delphine",
    "Esperanza",
    "Fiorella",
    "Gwendolyn",
    "Henrietta",
]
MEN = [
    "Aurelio",
    "Bastian",
    "Cormac",
    "Dmitri",
    "Emeka",
    "Florian",
    "Gustavo",
    "Hamish",
    "Ignacio",
    "Jovan",
    "Kenji",
    "Lorenzo",
    "Mateus",
    "Nikolai",
    "Oluwaseun",
    "Pradeep",
    "Quentin",
    "Rafferty",
    "Soren",
    "Tobias",
    "Umberto",
    "Vikram",
    "Wendell",
    "Xavier",
    "Yusuf",
    "Zoltan",
    "Anselm",
    "Benedikt",
    "Cyrus",
    "Desmond",
    "Evander",
    "Fitzgerald",
]
SURNAMES = [
    "Abernathy",
    "Balasubramanian",
    "Castellanos",
    "Dumont",
    "Eriksen",
    "Fairbanks",
    "Gallagher",
    "Halvorsen",
    "Iwasaki",
    "Jablonski",
    "Kowalczyk",
    "Lindqvist",
    "Mbeki",
    "Nakamura",
    "Okafor",
    "Pellegrini",
    "Quintero",
    "Rasmussen",
    "Szymanski",
    "Thorsby",
    "Underwood",
    "Vasquez",
    "Whitfield",
    "Yamamoto",
    "Zielinski",
    "Achterberg",
    "Brannigan",
    "Cervantes",
    "Delacroix",
    "Ellingsen",
    "Fontaine",
    "Greenhalgh",
    "Hargreaves",
    "Ivanova",
    "Jorgensen",
    "Kavanagh",
    "Lachance",
    "Montgomery",
    "Nwosu",
    "Oyelaran",
    "Petrakis",
    "Ravensworth",
    "Sandoval",
    "Tremblay",
    "Villanueva",
    "Wojcik",
    "Ashworth",
    "Blackwood",
    "Carrington",
    "Drummond",
]
AREA_CODES = ("303", "312", "404", "415", "503", "512", "602", "617", "702", "713", "919")

PERSONAS = (
    "You are brisk and businesslike. You answer questions directly, skip small talk and "
    "get impatient when the agent repeats itself or asks for things you already gave.",
    "You are friendly and chatty but you stay on topic. You thank the agent often and "
    "you like to hear what will happen next before you agree to anything.",
    "You are calm and careful. You listen to the whole answer, ask one clarifying "
    "question when something is unclear, and read numbers slowly and deliberately.",
    "You are a little stressed because you are short on time. You speak quickly, keep "
    "your answers short, and you want the agent to get to the point.",
    "You are polite but skeptical about fees and rules. You want the exact amounts and "
    "conditions spelled out before you agree, and you push back once if something "
    "sounds unfair.",
    "You are an older caller who is not in a hurry. You speak in full sentences, "
    "sometimes pause to find a document, and you appreciate a patient agent.",
)


class Person(BaseModel):
    """One invented person; ``phone`` uses the 555-01xx range reserved for fiction."""

    model_config = ConfigDict(frozen=True)
    first: str = Field(description="First name")
    last: str = Field(description="Last name")
    gender: Gender = Field(description="'woman' or 'man' (drives the caller's voice)")
    phone: str = Field(description="Phone number in +1-AAA-555-01NN form")

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def persona_id(self) -> int:
        """EVA convention: 1 = female voice, 2 = male voice."""
        return 1 if self.gender == "woman" else 2


class NameBook:
    """Draws people whose names never repeat within one record."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _fresh(self, pool: list[str]) -> str:
        choices = [name for name in pool if name not in self.used]
        name = self.rng.choice(choices)
        self.used.add(name)
        return name

    def person(self, gender: Gender | None = None) -> Person:
        chosen: Gender = gender if gender is not None else self.rng.choice(GENDERS)
        first = self._fresh(WOMEN if chosen == "woman" else MEN)
        last = self._fresh(SURNAMES)
        phone = f"+1-{self.rng.choice(AREA_CODES)}-555-01{self.rng.randint(0, 99):02d}"
        return Person(first=first, last=last, gender=chosen, phone=phone)

    def surname(self) -> str:
        return self._fresh(SURNAMES)


def pick_persona(rng: random.Random) -> str:
    return rng.choice(PERSONAS)
