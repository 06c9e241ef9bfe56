"""The simulated caller's behaviour (the ``callers`` registry picks which caller plays).

``caller`` (the scripted caller: the trace's caller lines, driven by what it hears; its
spoken closing and repeat-request lines).
"""
