"""Property test: random user ids over put/search/list/export/purge never touch another tenant."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, LifecycleRetriever
from langchain_lifecycle_memory.lifecycle.portability import export_records
from langchain_lifecycle_memory.store.tenants import label_user, user_label

TRICKY = ["*", "?", "%", "%25", "%2E", "%2e", ".", "..", "a.b", "a%2Eb", "a%b", "[*]", "memories", "ß", "SS", "İ"]
base = st.text(min_size=1, max_size=12)
user_id = st.one_of(
    base,
    st.sampled_from(TRICKY),
    st.text(min_size=300, max_size=1500),
    st.builds(lambda s, t: s + t, base, st.sampled_from(TRICKY)),
).filter(lambda s: s.strip() != "")


@st.composite
def tenants(draw: st.DrawFn) -> list[str]:
    """2-5 distinct ids, often case/dot/percent variants of one another."""
    seed = draw(user_id)
    variants = [seed, seed.upper(), seed.lower(), seed.swapcase(), seed + ".", seed.replace(".", "%2E"), seed + "*"]
    picked = draw(st.lists(st.sampled_from(variants), max_size=3)) + draw(st.lists(user_id, min_size=1, max_size=3))
    return list(dict.fromkeys(u for u in picked if u.strip()))[:5] or [seed]


def test_random_user_ids_never_cross_tenants(tmp_path: Path, embeddings: object) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "mem", embeddings=embeddings))
    retriever = LifecycleRetriever(store=memory.store)
    owner: dict[str, str] = {}
    counter = itertools.count()

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    @given(users=tenants(), victim=st.integers(min_value=0, max_value=4))
    def run(users: list[str], victim: int) -> None:
        assert len({user_label(u) for u in users}) == len(users)
        assert all(label_user(user_label(u)) == u for u in users)
        for user in users:
            text = f"note {next(counter)}: my locker code is {len(owner)}"
            memory.add_episode(text, user)
            owner[text] = user

        def own(user: str, contents: list[str]) -> None:
            assert contents, user
            assert {owner[c] for c in contents} == {user}

        for user in users:
            own(user, [r.content for r in memory.list(user)])
            found = [d.page_content for d in memory.search("what is my locker code", user, k=50)]
            assert {owner[c] for c in found} <= {user}
            config = {"configurable": {"user_id": user}}
            found = [d.page_content for d in retriever.invoke("my locker code", config=config, k=50)]
            assert {owner[c] for c in found} <= {user}
            out = io.StringIO()
            export_records(memory.store, out, namespace_prefix=memory.namespace(user))
            own(user, [json.loads(line)["content"] for line in out.getvalue().split("\n") if line])

        gone = users[victim % len(users)]
        before = {u: sorted(r.id for r in memory.list(u)) for u in set(owner.values()) if u != gone}
        memory.purge(gone)
        assert memory.list(gone) == []
        for text in [t for t, u in owner.items() if u == gone]:
            del owner[text]
        assert {u: sorted(r.id for r in memory.list(u)) for u in before} == before

    run()
