"""The naive baseline now lives in :mod:`langchain_lifecycle_memory.naive` (the demo uses it too,
and nothing in the package may import ``eval``); this module keeps the old import path.
"""

from langchain_lifecycle_memory.eval.scenarios import make_engine
from langchain_lifecycle_memory.naive import NaiveEngine, NaiveMemory, ScenarioEngine, drop_store, fresh_store

__all__ = ["NaiveEngine", "NaiveMemory", "ScenarioEngine", "drop_store", "fresh_store", "make_engine"]
