"""The wire: the agent protocol between harness and agent under test, and both ends of it.

``protocol`` (Twilio Media Streams JSON plus the evaluation events), ``wire_checks`` (audio
format and flooding checks beyond syntax), ``external`` (an agent that is somebody else's
ws:// server), ``serve`` and ``serve_timing`` (a registered agent served as a standalone
WebSocket server, with its own account of its response times).
"""
