"""Local stand-ins of the providers' published APIs, served on loopback.

Each module speaks one provider's protocol as its documentation and SDK types define it,
so the official client (or Pipecat's service) connects to it unchanged through its base-URL
setting. A stand-in really listens and really speaks (:mod:`.audio`: energy VAD +
PocketSphinx with the domain's agent-side recogniser, eSpeak answers) and decides with the
shared brain (:mod:`.brain`: the reference policy over what it heard). They serve the
test suite and ``--rehearse`` runs: a catalogue system run offline exactly as shipped,
before anyone pays for it.
"""
