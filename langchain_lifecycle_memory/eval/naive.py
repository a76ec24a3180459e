"""Old import path of the naive baseline, now :mod:`langchain_lifecycle_memory.graph.naive`.

It moved because the demo uses it too, and nothing in the package may import ``eval``.
"""

from langchain_lifecycle_memory.eval.scenarios import make_engine
from langchain_lifecycle_memory.graph.naive import NaiveEngine, NaiveMemory, ScenarioEngine, drop_store, fresh_store

__all__ = ["NaiveEngine", "NaiveMemory", "ScenarioEngine", "drop_store", "fresh_store", "make_engine"]
