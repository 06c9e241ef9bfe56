"""The world a conversation happens in: scenario records, domain tool engines, DB hashing.

This package never imports Prefect.
"""
