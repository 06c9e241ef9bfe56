"""Performance harness: `python -m benchmarks` (see benchmarks/common.py)."""
