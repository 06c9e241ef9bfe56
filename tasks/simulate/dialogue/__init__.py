"""What both simulated sides share about the conversation, using only what was said.

``script`` (the golden trace cut into the caller's lines and the agent's blocks), ``cues``
(what a turn does: asks to repeat, asks for a value, gives up), ``values`` and ``slots``
(reading caller-supplied values out of heard text).
"""
