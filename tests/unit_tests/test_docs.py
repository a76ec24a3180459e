"""The README and docs/: short, written for users, every file they name exists, numbers rendered from results."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_readme_is_under_350_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 350


def test_the_docs_pages_exist() -> None:
    names = {p.name for p in PAGES}
    assert {"design.md", "benchmarks.md", "operations.md", "cli.md", "llm.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_diary_in_the_docs(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    diary = [
        r"\bissues? #?\d+",
        r"\bthis (?:round|session)\b",
        r"\bhelper[- ]?\d+|\bh\d{1,2}\b",
        r"\.\./shared",
        r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w.-])",  # a commit hash
    ]
    found = [m.group(0) for pattern in diary for m in re.finditer(pattern, text, re.IGNORECASE)]
    assert found == [], f"{page.name}: {found}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_file_the_docs_name_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = set(re.findall(r"[\w./-]*\w\.(?:py|ipynb)\b", text))
    tracked = {
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*")
        if p.suffix in (".py", ".ipynb") and ".venv" not in p.parts
    }
    basenames = {Path(p).name for p in tracked}
    missing = [n for n in named if (n not in tracked if "/" in n else n not in basenames)]
    assert missing == [], f"{page.name} names files that do not exist: {missing}"


def test_benchmarks_page_is_what_the_results_render() -> None:
    done = subprocess.run([sys.executable, "benchmarks/report.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
