"""Fake remote services as real HTTP servers on 127.0.0.1 (see fixtures.py for pytest use)."""
