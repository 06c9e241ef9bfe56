"""Seeded, reproducible degradations of caller audio (accent, noise, connection).

Pure functions over ``Clip`` (``apply_<x>(clip, params, rng) -> Clip``), further kinds
registered in ``PERTURBATIONS`` (``perturbations.kinds``), named ``ConditionSpec``
combinations in ``CONDITIONS``, and the stateful ``Channel`` that a simulated call pushes
caller audio through. No Prefect and no ``tasks`` imports here.
"""

from perturbations.accent import AccentParams, apply_accent
from perturbations.audio import AudioError, Clip, VoiceSpec
from perturbations.channel import Channel, make_channel
from perturbations.conditions import (
    CONDITIONS,
    ConditionSpec,
    get_condition,
    load_conditions_yaml,
)
from perturbations.connection import (
    BandLimitParams,
    ClippingParams,
    CodecParams,
    ConnectionParams,
    GainParams,
    JitterParams,
    PacketLossParams,
    apply_band_limit,
    apply_clipping,
    apply_connection,
    apply_gain,
    apply_jitter_dropouts,
    apply_low_bitrate_codec,
    apply_packet_loss,
)
from perturbations.kinds import PERTURBATIONS, PerturbationKind, perturbation_kind
from perturbations.noise import NOISE_GENERATORS, NoiseParams, apply_background_noise
from perturbations.seeding import derive_seed, make_rng

__all__ = [
    "CONDITIONS",
    "NOISE_GENERATORS",
    "PERTURBATIONS",
    "AccentParams",
    "AudioError",
    "BandLimitParams",
    "Channel",
    "Clip",
    "ClippingParams",
    "CodecParams",
    "ConditionSpec",
    "ConnectionParams",
    "GainParams",
    "JitterParams",
    "NoiseParams",
    "PacketLossParams",
    "PerturbationKind",
    "VoiceSpec",
    "apply_accent",
    "apply_background_noise",
    "apply_band_limit",
    "apply_clipping",
    "apply_connection",
    "apply_gain",
    "apply_jitter_dropouts",
    "apply_low_bitrate_codec",
    "apply_packet_loss",
    "derive_seed",
    "get_condition",
    "load_conditions_yaml",
    "make_channel",
    "make_rng",
    "perturbation_kind",
]
