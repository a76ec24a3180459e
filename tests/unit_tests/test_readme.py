"""The README's Python examples run as written (in a temp dir, offline)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "VS Code" in out
    assert "Vim 编辑器" not in out.split("[(")[0]  # the injected block never carries the stale value


def test_readme_has_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "lifecycle-memory demo" in text and "bash .ci/run" in text
