"""Systems under test as data: the catalogue (``catalogue.py``, ``catalogue/*.yaml``) and the
checks run before the first trial (``preflight.py``).

Nothing is imported here: ``tasks.systems.pipecat_bot`` runs inside the separate Pipecat
environment, which must not pay for (or need) the catalogue's dependencies.
"""
