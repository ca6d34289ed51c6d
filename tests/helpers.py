"""Helpers shared by tests in several folders (fixtures live in tests/conftest.py)."""
from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).parent
DATA = TESTS / "data"
# A whole Kitebase run saved by ragrail 1's baseline writer.
KITEBASE_V1 = DATA / "baselines" / "kitebase-v1.json"
