"""Multi-talker babble made with our own TTS, registered as the noise source ``babble``.

Several eSpeak talkers (different accents and variants) read unrelated sentences at random
offsets; their sum is the murmur of a busy room. Registered on import of ``tasks.voice``
(perturbations cannot import TTS themselves).
"""

from __future__ import annotations

import numpy as np

from perturbations.audio import VoiceSpec
from perturbations.noise import NOISE_GENERATORS
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize

TALKERS = 6
_VOICES = ["en-us+m3", "en-gb+f2", "en-us-nyc+m1", "en-gb-scotland+f4", "en-029+m5", "en-us+f1"]
_SENTENCES = [
    "I told him we would meet at the station after lunch, but the train was late again.",
    "Could you pass the menu, I think they changed the specials since last week.",
    "She said the project is almost done and they only need to sign the papers.",
    "We are going to the lake this weekend if the weather stays like this.",
    "Honestly the coffee here is better than the place across the street.",
    "My brother just moved to a new apartment near the river and he loves it.",
    "They are building a new school downtown, it should open next year.",
    "Did you see the game last night, that last minute goal was unbelievable.",
]


@NOISE_GENERATORS.register("babble")
def babble_noise(seconds: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    n = round(seconds * rate)
    mix = np.zeros(n)
    for talker in range(TALKERS):
        voice = VoiceSpec(
            voice=_VOICES[talker % len(_VOICES)], rate_wpm=int(rng.integers(150, 200))
        )
        order = rng.permutation(len(_SENTENCES))
        speech = np.concatenate(
            [resample(synthesize(_SENTENCES[i], voice), rate).samples for i in order]
        ).astype(np.float64)
        reps = -(-n // speech.size) + 1
        track = np.tile(speech, reps)
        offset = int(rng.integers(0, speech.size))
        mix += track[offset : offset + n] / (np.sqrt(np.mean(np.square(speech))) or 1.0)
    rms = float(np.sqrt(np.mean(np.square(mix))))
    return mix / rms if rms > 0 else mix
