"""Every notebook runs top to bottom offline from a fresh clone, draws a plot, and is saved without outputs.

The notebooks are their own source (no generator): edit them in Jupyter, then clear the outputs.
Each one is executed with ``nbclient`` in a ``python3`` kernel started from this interpreter,
from a **copy** of the clone's ``notebooks/`` and ``benchmarks/`` in a temporary folder (so no
sibling ``shared/`` folder is in view, and ``LIFECYCLE_MEMORY_SHARED`` is unset): what runs is
what the repository contains. No API keys are in its environment.
A first cell (added to the in-memory copy only) blocks every socket that is not loopback
inside the kernel, so a notebook that reaches for the network fails here with the failing
cell's error. The kernel itself talks to this process over loopback ZMQ.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
EXPECTED = [
    "01_quickstart.ipynb",
    "02_five_failure_modes.ipynb",
    "03_langgraph_agent.ipynb",
    "04_langsmith_experiments.ipynb",
    "05_benchmarks.ipynb",
]
TIMEOUT_S = 300
"""Per notebook, all cells together (each takes well under a minute on two cores)."""
SECRETS = ("OPENAI_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE")
OFFLINE_GUARD = """\
import sys as _sys

from pytest_socket import socket_allow_hosts as _allow

_allow(["127.0.0.1", "localhost", "::1"], allow_unix_socket=True)
print(_sys.executable)
del _allow, _sys
"""
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _kernel_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SECRETS}
    env["TMPDIR"] = str(tmp)  # the notebook's temporary folders land here, to check they are removed
    env.update(
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        HF_HUB_OFFLINE="1",
        MPLBACKEND="module://matplotlib_inline.backend_inline",
        PYTHONDONTWRITEBYTECODE="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        JUPYTER_PLATFORM_DIRS="1",
    )
    env.pop("LIFECYCLE_MEMORY_NOTEBOOK_RERUN", None)
    env.pop("LIFECYCLE_MEMORY_SHARED", None)  # the full data sets stay optional: run with what the repo has
    return env


def _kernel_manager(tmp_path: Path) -> Any:
    """A kernel manager whose ``python3`` spec runs ``sys.executable`` (not whatever ``python`` is on PATH)."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    kernels = tmp_path / "kernels"
    write_kernel_spec(str(kernels / "python3"))
    return KernelManager(
        kernel_name="python3",
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]),
        connection_file=str(tmp_path / "kernel-connection.json"),  # not a stray tmp*.json in the system temp dir
    )


def _error_text(cell: Any) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            trace = "\n".join(output.get("traceback", [])) or f"{output['ename']}: {output['evalue']}"
            return _ANSI.sub("", trace)
    return ""


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


def test_the_notebooks_are_all_there() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_is_saved_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and nb.cells[0].cell_type == "markdown", "a notebook opens with prose, then code"
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{name}: cells {dirty} carry outputs; clear them (Jupyter: Edit > Clear All Outputs)"


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_uses_only_what_the_repo_has(name: str) -> None:
    text = "\n".join(c.source for c in nbformat.read(NOTEBOOKS / name, as_version=4).cells)
    assert "_helpers" not in text and "langchain_lifecycle_memory._" not in text, "cells use public APIs only"
    assert "DESIGN.md" not in text and "../shared" not in text, "no reference to files the repository lacks"
    for data in re.findall(r'"data"\) / "([^"]+)"', text):
        assert (NOTEBOOKS / "data" / data).is_file(), data


def _fresh_clone(tmp_path: Path) -> Path:
    """The parts of the repository a notebook reads, copied where no ``shared/`` is beside them."""
    clone = tmp_path / "clone"
    for part in ("notebooks", "benchmarks"):
        shutil.copytree(NOTEBOOKS.parent / part, clone / part, ignore=shutil.ignore_patterns("results", "__pycache__"))
    assert not (clone.parent / "shared").exists() and not (clone / "shared").exists()
    return clone / "notebooks"


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs_offline_and_plots(name: str, tmp_path: Path) -> None:
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    folder = _fresh_clone(tmp_path)
    nb = nbformat.read(folder / name, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(OFFLINE_GUARD))
    before = _files(folder)
    client = NotebookClient(
        nb,
        km=_kernel_manager(tmp_path),
        timeout=TIMEOUT_S,
        startup_timeout=120,
        resources={"metadata": {"path": str(folder)}},
    )
    deadline = time.monotonic() + TIMEOUT_S
    kernel_tmp = tmp_path / "kernel-tmp"
    kernel_tmp.mkdir()
    with client.setup_kernel(env=_kernel_env(kernel_tmp)):
        assert client.kc is not None
        for index, cell in enumerate(nb.cells):
            shown = index - 1  # the guard cell is not in the saved notebook
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"{name} ran past {TIMEOUT_S} s before cell {shown}")
            client.timeout = max(1, int(remaining))
            try:
                client.execute_cell(cell, index)
            except CellTimeoutError:
                pytest.fail(f"{name}: cell {shown} ran past the notebook's {TIMEOUT_S} s budget:\n{cell.source}")
            except CellExecutionError:
                pytest.fail(f"{name}: cell {shown} failed:\n{cell.source}\n\n{_error_text(cell)}", pytrace=False)

    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert images, f"{name} produced no image/png output (every notebook should draw at least one plot)"
    left = sorted(p.name for p in kernel_tmp.iterdir() if p.name.startswith("lifecycle-"))
    assert not left, f"{name} left temporary folders behind: {left}"
    created = _files(folder) - before
    assert not created, f"{name} wrote into notebooks/: {sorted(created)} (use a temporary folder)"
    guard_output = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert guard_output.strip() == sys.executable, "the kernel should run this test's interpreter"
