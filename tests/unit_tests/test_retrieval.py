from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import chromadb
import pytest
from langchain_core.callbacks import BaseCallbackHandler, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_lifecycle_memory import ChromaMemoryStore
from langchain_lifecycle_memory.read.retrieval import (
    ChannelWeights,
    LifecycleRetriever,
    RetrievalExplanation,
)
from langchain_lifecycle_memory.read.routing import without_time
from langchain_lifecycle_memory.schema import Fact, MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.write.update import reconcile

T0 = datetime(2024, 1, 1, 10, tzinfo=timezone.utc)
T1 = datetime(2024, 3, 1, 10, tzinfo=timezone.utc)
NOW = datetime(2024, 3, 2, 9, tzinfo=timezone.utc)
NS = ("memories", "u1")

OFF_TOPIC = [
    "明天会下雨吗？",
    "What's the weather forecast for tomorrow?",
    "Who won the NBA Finals in 2016?",
    "How long should I boil an egg for a runny yolk?",
    "世界杯历史上进球最多的球员是谁？",
    "红烧肉怎么做比较好吃？",
]


@pytest.fixture(scope="module")
def embeddings() -> UniversalSentenceEncoderEmbeddings:
    return UniversalSentenceEncoderEmbeddings()


@pytest.fixture(scope="module")
def client() -> Any:
    return chromadb.EphemeralClient()


@pytest.fixture
def store(client: Any, embeddings: UniversalSentenceEncoderEmbeddings) -> Iterator[ChromaMemoryStore]:
    yield ChromaMemoryStore(client=client, embeddings=embeddings, collection_prefix=f"t{uuid.uuid4().hex[:8]}")


SET_VALUED = {"cardinality": "set"}
"""Several current values of one slot are legitimate only in a set-valued slot."""


def record(
    content: str,
    attribute: str | None = None,
    value: str | None = None,
    *,
    ns: tuple[str, ...] = NS,
    entity: str | None = "user",
    at: datetime = T0,
    **extra: Any,
) -> MemoryRecord:
    return MemoryRecord(
        namespace=ns,
        content=content,
        entity=entity if attribute else None,
        attribute=attribute,
        value=value,
        created_at=at,
        updated_at=at,
        valid_from=at,
        **extra,
    )


def supersede(store: ChromaMemoryStore, old: MemoryRecord, new: MemoryRecord) -> None:
    """What the update step does: archive the old version, link both, store the new one."""
    new = new.model_copy(update={"supersedes": old.id})
    store.put_records([old.transition("archived", at=new.valid_from, superseded_by=new.id), new])


@pytest.fixture
def seed_demo(store: ChromaMemoryStore) -> ChromaMemoryStore:
    vim = record("用户喜欢使用 Vim 编辑器", "editor", "Vim", kind="preference", confidence=0.9)
    store.put_record(vim)
    supersede(store, vim, record("用户现在使用 VS Code 编辑器", "editor", "VS Code", at=T1, kind="preference"))
    return store


@pytest.fixture
def few_memories(store: ChromaMemoryStore) -> ChromaMemoryStore:
    store.put_records(
        [
            record("用户是一名产品经理，在在线教育公司工作", "job", "产品经理"),
            record("用户养了一条叫旺财的狗", "pet", "旺财"),
            record("用户周末喜欢摄影", "hobby", "摄影"),
            record("The user builds Android apps in Kotlin.", "programming_language", "Kotlin"),
            record("The user is lactose intolerant.", "diet_restriction", "lactose intolerant"),
            record("The user's sister Maya is a dentist.", "job", "dentist", entity="sister_maya"),
        ]
    )
    return store


def contents(docs: Sequence[Document]) -> list[str]:
    return [d.page_content for d in docs]


# ---------------------------------------------------------------- semantic gap


def test_paraphrase_without_shared_words_reaches_the_editor_memory(store: ChromaMemoryStore) -> None:
    store.put_record(record("用户喜欢使用 Vim 编辑器", "editor", "Vim"))
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    assert contents(retriever.invoke("我适合用什么工具写 Python？")) == ["用户喜欢使用 Vim 编辑器"]
    assert contents(retriever.invoke("What tool should I use to write Python?")) == ["用户喜欢使用 Vim 编辑器"]


def test_dense_only_misses_what_the_hybrid_retriever_finds(store: ChromaMemoryStore) -> None:
    store.put_record(record("用户喜欢使用 Vim 编辑器", "editor", "Vim"))
    dense_only = LifecycleRetriever(store=store, namespace=NS, now=NOW, weights=ChannelWeights(lexical=0.0, slot=0.0))
    hybrid = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    # dense alone does not match it; it comes back only as the user's general profile
    assert [d.metadata.get("profile") for d in dense_only.invoke("我适合用什么工具写 Python？")] == [True]
    assert len(hybrid.invoke("我适合用什么工具写 Python？")) == 1


def test_chinese_bm25_and_routing_find_the_dog_name(few_memories: ChromaMemoryStore) -> None:
    retriever = LifecycleRetriever(store=few_memories, namespace=NS, now=NOW)
    assert contents(retriever.invoke("我家狗叫什么名字？")) == ["用户养了一条叫旺财的狗"]
    by_bm25 = sorted(retriever.explain("我家狗叫什么名字？").candidates, key=lambda c: -c.raw["bm25"])
    assert by_bm25[0].record.value == "旺财" and by_bm25[0].raw["bm25"] > 0


# ---------------------------------------------------------------- pollution


@pytest.mark.parametrize("query", OFF_TOPIC)
def test_off_topic_questions_return_nothing(few_memories: ChromaMemoryStore, query: str) -> None:
    retriever = LifecycleRetriever(store=few_memories, namespace=NS, now=NOW)
    assert retriever.invoke(query) == []


def test_min_score_zero_lets_everything_in_which_is_the_pollution_the_default_prevents(
    few_memories: ChromaMemoryStore,
) -> None:
    loose = LifecycleRetriever(store=few_memories, namespace=NS, now=NOW, min_score=0.0, k=10)
    assert len(loose.invoke("明天会下雨吗？")) == 6


def test_weather_explanation_marks_every_candidate_below_threshold(seed_demo: ChromaMemoryStore) -> None:
    retriever = LifecycleRetriever(store=seed_demo, namespace=NS, now=NOW)
    explanation = retriever.explain("今天天气怎么样？")
    active = [c for c in explanation.candidates if c.record.status is MemoryStatus.ACTIVE]
    assert active and all(c.decision == "below_threshold" for c in active)
    assert all(c.fused < explanation.min_score for c in active)
    assert explanation.kept() == []


def test_general_knowledge_is_not_routed_into_personal_facts(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            record("The user lives in Minneapolis.", "city", "Minneapolis"),
            record("The user works as a data analyst.", "job", "data analyst"),
        ]
    )
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    assert retriever.invoke("What's the capital of Canada?") == []
    assert retriever.invoke("How do vaccines work?") == []
    assert [d.metadata["value"] for d in retriever.invoke("Which city do I live in?")] == ["Minneapolis"]
    assert retriever.explain("What's the capital of Canada?").personal is False
    # "the US" is a country, not the speaker's "us": no profile of the user answers a civics question
    assert retriever.invoke("How many senators does the US have?") == []
    assert retriever.explain("How many senators does the U.S. have?").personal is False


# ---------------------------------------------------------------- lifecycle filters


def test_archived_version_is_never_returned_by_default(seed_demo: ChromaMemoryStore) -> None:
    retriever = LifecycleRetriever(store=seed_demo, namespace=NS, now=NOW)
    for query in ("用户的编辑器偏好是什么？", "我适合用什么工具写 Python？", "Vim"):
        found = contents(retriever.invoke(query))
        assert "用户喜欢使用 Vim 编辑器" not in found
    assert contents(retriever.invoke("用户的编辑器偏好是什么？")) == ["用户现在使用 VS Code 编辑器"]


def test_explain_shows_the_superseded_version_as_archived(seed_demo: ChromaMemoryStore) -> None:
    explanation = LifecycleRetriever(store=seed_demo, namespace=NS, now=NOW).explain("用户的编辑器偏好是什么？")
    assert isinstance(explanation, RetrievalExplanation)
    by_value = {c.record.value: c for c in explanation.candidates}
    assert by_value["Vim"].decision == "archived"
    assert "superseded by" in by_value["Vim"].reason
    assert by_value["Vim"].raw["cosine"] > 0.3  # it *was* similar: the lifecycle, not the score, dropped it
    assert by_value["VS Code"].decision == "kept"
    assert set(by_value["VS Code"].channels) == {"dense", "lexical", "slot"}


def test_as_of_returns_the_value_valid_at_that_time(seed_demo: ChromaMemoryStore) -> None:
    retriever = LifecycleRetriever(store=seed_demo, namespace=NS, now=NOW)
    january = retriever.invoke("What editor did I use?", as_of="2024-01-15T00:00:00Z")
    assert [d.metadata["value"] for d in january] == ["Vim"]
    assert january[0].metadata["status"] == "archived"
    explanation = retriever.explain("What editor did I use?", as_of="2024-01-15T00:00:00Z")
    assert {c.record.value: c.decision for c in explanation.candidates}["VS Code"] == "not_valid_at_as_of"


@pytest.mark.parametrize(
    ("question", "as_of", "expected"),
    [
        ("2022年元旦那会儿我在哪个部门？", "2022-01-01", "财务部"),
        ("2023年底我在哪个部门？", "2023-12-01", "审计部"),
        ("2022年初我在哪个部门工作？", "2022-03-01", "财务部"),
    ],
)
def test_a_question_of_the_past_is_not_drowned_by_its_time_phrase(
    mem_store: ChromaMemoryStore, question: str, as_of: str, expected: str
) -> None:
    history = [
        ("2021-04-12", "department", "财务部出纳", "用户在公司财务部做出纳。"),
        ("2022-01-10", "dance_class", "周二晚上", "用户每周二晚上上拉丁舞课。"),
        ("2022-10-17", "department", "审计部", "用户调到审计部了。"),
        ("2024-06-03", "department", "采购部主管", "用户现在去采购部当主管了。"),
    ]
    for at, attribute, value, content in history:
        reconcile(mem_store, NS, [Fact(entity="user", attribute=attribute, value=value, content=content)], at=at)
    retriever = LifecycleRetriever(store=mem_store, namespace=NS, now="2024-07-01T00:00:00Z")
    assert [d.metadata["value"][:3] for d in retriever.invoke(question, as_of=as_of)] == [expected]


@pytest.mark.parametrize(
    ("question", "left"),
    [
        ("2023年底我在哪个部门？", "我在哪个部门？"),
        ("2022 年春天 Nora 在哪里上学？", "Nora 在哪里上学？"),
        ("2021年春节那会儿我养的什么鱼？", "我养的什么鱼？"),  # the festival, not "spring" plus a stray 节
        ("Who was my doctor in mid-2022?", "Who was my doctor ?"),
        ("How much was my rent in January 2023, back then?", "How much was my rent , ?"),
        ("2022", "2022"),  # nothing left: the question stays as asked
    ],
)
def test_without_time_drops_time_phrases_only(question: str, left: str) -> None:
    assert without_time(question) == left


def test_expired_and_pending_records_are_left_out(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            record("用户这周只喝无糖奶茶", "drink", "无糖奶茶", expires_at=T0 + timedelta(days=7)),
            record("The user might like jazz.", "music", "jazz", status=MemoryStatus.PENDING),
        ]
    )
    retriever = LifecycleRetriever(store=store, namespace=NS, now=T0 + timedelta(days=30))
    assert retriever.invoke("下午帮我点杯奶茶吧") == []
    assert retriever.invoke("Put on some music for me.") == []
    assert len(retriever.invoke("下午帮我点杯奶茶吧", include_expired=True)) == 1
    decisions = {c.record.value: c.decision for c in retriever.explain("下午帮我点杯奶茶吧").candidates}
    assert decisions == {"无糖奶茶": "expired", "jazz": "pending"}
    fresh = LifecycleRetriever(store=store, namespace=NS, now=T0 + timedelta(days=1))
    assert contents(fresh.invoke("下午帮我点杯奶茶吧")) == ["用户这周只喝无糖奶茶"]


def test_kinds_filter(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            record("The user's email is a@example.com.", "email", "a@example.com", kind="sensitive"),
            record("The user works as an architect.", "job", "architect", kind="profile"),
        ]
    )
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW, min_score=0.0, kinds=("profile",))
    assert [d.metadata["kind"] for d in retriever.invoke("Tell me about me")] == ["profile"]


# ---------------------------------------------------------------- tenants and entities


def test_other_tenant_is_never_returned(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            record("用户在网易做游戏策划", "employer", "网易"),
            record("用户在腾讯做后端开发", "employer", "腾讯", ns=("memories", "u2")),
        ]
    )
    retriever = LifecycleRetriever(store=store, now=NOW)
    mine = retriever.invoke("我在哪家公司上班？", config={"configurable": {"user_id": "u1"}})
    theirs = retriever.invoke("我在哪家公司上班？", config={"configurable": {"user_id": "u2"}})
    nobody = retriever.invoke("我在哪家公司上班？", config={"configurable": {"user_id": "u3"}})
    assert [d.metadata["value"] for d in mine] == ["网易"]
    assert [d.metadata["value"] for d in theirs] == ["腾讯"]
    assert nobody == []
    explanation = retriever.explain("我在哪家公司上班？", user_id="u1", include_other_tenants=True)
    other = explanation.by_decision("other_tenant")
    assert [c.record.value for c in other] == ["腾讯"] and other[0].namespace == ("memories", "u2")
    assert [c.record.value for c in explanation.kept()] == ["网易"]


def test_relatives_facts_stay_out_of_first_person_questions_and_vice_versa(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            record("用户写 Java 一直使用 IntelliJ IDEA", "editor", "IntelliJ IDEA"),
            record("The user's colleague Li uses Cursor for everything.", "editor", "Cursor", entity="colleague_li"),
            record("用户的女儿朵朵在学钢琴", "instrument", "钢琴", entity="daughter_duoduo"),
            record("The user plays the guitar.", "instrument", "guitar"),
        ]
    )
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    assert [d.metadata["value"] for d in retriever.invoke("我用的是什么 IDE？")] == ["IntelliJ IDEA"]
    assert [d.metadata["value"] for d in retriever.invoke("Which editor does Li use?")] == ["Cursor"]
    assert [d.metadata["value"] for d in retriever.invoke("朵朵在学什么乐器？")] == ["钢琴"]
    explanation = retriever.explain("朵朵在学什么乐器？")
    assert explanation.target_entities == ["daughter_duoduo"]
    guitar = next(c for c in explanation.candidates if c.record.value == "guitar")
    assert guitar.decision == "below_threshold" and guitar.entity_factor < 1


def test_relatives_are_recognised_by_relation_words_in_both_languages(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            record("The user's mother lives in Lisbon.", "city", "Lisbon", entity="mother"),
            record("The user lives in Porto.", "city", "Porto"),
            record("用户的哥哥是律师", "job", "律师", entity="brother"),
            record("用户是一名护士", "job", "护士"),
        ]
    )
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    assert [d.metadata["value"] for d in retriever.invoke("Where does my mom live?")] == ["Lisbon"]
    assert [d.metadata["value"] for d in retriever.invoke("Which city do I live in?")] == ["Porto"]
    assert [d.metadata["value"] for d in retriever.invoke("我哥是做什么的？")] == ["律师"]
    assert [d.metadata["value"] for d in retriever.invoke("我是做什么工作的？")] == ["护士"]


# ---------------------------------------------------------------- results and options


def test_documents_carry_slot_lifecycle_and_scores(seed_demo: ChromaMemoryStore) -> None:
    doc = LifecycleRetriever(store=seed_demo, namespace=NS, now=NOW).invoke("用户喜欢什么编辑器")[0]
    meta = doc.metadata
    assert doc.id == meta["id"] and meta["namespace"] == list(NS)
    assert (meta["entity"], meta["attribute"], meta["value"], meta["status"]) == ("user", "editor", "VS Code", "active")
    assert meta["valid_from"] == T1.isoformat() and meta["valid_to"] is None
    assert set(meta["scores"]) == {"dense", "lexical", "slot", "fused", "rrf"}
    assert 0.3 <= meta["score"] <= 1.0


def test_documents_say_which_messages_a_memory_came_from(store: ChromaMemoryStore) -> None:
    source = {"extractor": "rule", "thread_id": "t-7", "message_ids": ["m-41", "m-42"]}
    store.put_record(record("用户养了一条叫旺财的狗", "pet", "旺财", source=source))
    doc = LifecycleRetriever(store=store, namespace=NS, now=NOW).invoke("我家狗叫什么名字？")[0]
    assert doc.metadata["source"] == source


def test_k_limits_results_and_explain_says_cut_by_k(store: ChromaMemoryStore) -> None:
    teas = [record(f"The user drinks tea number {i}.", "drink", f"tea {i}", metadata=SET_VALUED) for i in range(5)]
    store.put_records(teas)
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW, k=2)
    assert len(retriever.invoke("What do I like to drink?")) == 2
    assert len(retriever.invoke("What do I like to drink?", k=4)) == 4
    decisions = [c.decision for c in retriever.explain("What do I like to drink?").candidates]
    assert decisions.count("kept") == 2 and decisions.count("cut_by_k") == 3


def test_rrf_orders_but_the_same_threshold_decides(few_memories: ChromaMemoryStore) -> None:
    rrf = LifecycleRetriever(store=few_memories, namespace=NS, now=NOW, fusion="rrf")
    assert rrf.invoke("明天会下雨吗？") == []
    assert contents(rrf.invoke("我家狗叫什么名字？")) == ["用户养了一条叫旺财的狗"]


def test_index_is_rebuilt_after_a_write(store: ChromaMemoryStore) -> None:
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    store.put_record(record("用户周末喜欢摄影", "hobby", "摄影"))
    # no dog yet: nothing matches ("我家狗" is the user's own, so their lasting facts may come as such)
    assert [d for d in retriever.invoke("我家狗叫什么名字？") if not d.metadata.get("profile")] == []
    store.put_record(record("用户养了一条叫旺财的狗", "pet", "旺财"))
    assert contents(retriever.invoke("我家狗叫什么名字？")) == ["用户养了一条叫旺财的狗"]


def test_missing_namespace_and_unknown_options_say_how_to_fix(store: ChromaMemoryStore) -> None:
    with pytest.raises(ValueError, match="user_id"):
        LifecycleRetriever(store=store).invoke("anything")
    with pytest.raises(TypeError, match="per-call options"):
        LifecycleRetriever(store=store, namespace=NS).invoke("anything", top_k=3)


# ---------------------------------------------------------------- expansion, rerank, async, tracing


def test_query_model_paraphrases_are_searched_too(store: ChromaMemoryStore) -> None:
    store.put_record(record("The user has a tabby cat named Waffles.", "pet", "Waffles"))
    model = GenericFakeChatModel(messages=iter([AIMessage("1. What is the name of my pet cat?\n2. my cat")]))
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW, query_model=model)
    explanation = retriever.explain("Who will miss me at home?")
    assert explanation.queries == ["Who will miss me at home?", "What is the name of my pet cat?", "my cat"]
    assert [c.record.value for c in explanation.kept()] == ["Waffles"]


class _ReverseAndDropLast(BaseDocumentCompressor):
    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        return list(reversed(documents))[:-1]


def test_reranker_reorders_and_may_drop(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            record("The user drinks an oat milk latte every morning.", "drink", "oat milk latte", metadata=SET_VALUED),
            record("The user drinks green tea in the afternoon.", "drink", "green tea", metadata=SET_VALUED),
            record("The user drinks black coffee at work.", "drink", "black coffee", metadata=SET_VALUED),
        ]
    )
    plain = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    reranked = LifecycleRetriever(store=store, namespace=NS, now=NOW, reranker=_ReverseAndDropLast())
    before = contents(plain.invoke("What do I drink?"))
    assert len(before) == 3
    assert contents(reranked.invoke("What do I drink?")) == list(reversed(before))[:-1]


async def test_async_matches_sync(seed_demo: ChromaMemoryStore) -> None:
    retriever = LifecycleRetriever(store=seed_demo, namespace=NS, now=NOW)
    sync_docs = retriever.invoke("我适合用什么工具写 Python？")
    async_docs = await retriever.ainvoke("我适合用什么工具写 Python？")
    assert contents(async_docs) == contents(sync_docs) == ["用户现在使用 VS Code 编辑器"]
    explanation = await retriever.aexplain("我适合用什么工具写 Python？")
    assert {c.record.value: c.decision for c in explanation.candidates} == {"Vim": "archived", "VS Code": "kept"}


class _Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.metadata: dict[str, Any] = {}
        self.names: list[str] = []

    def on_retriever_start(self, serialized: Any, query: str, **kwargs: Any) -> None:
        self.metadata = dict(kwargs.get("metadata") or {})
        self.names.append(str(kwargs.get("name")))


def test_langsmith_retriever_params_are_traced(seed_demo: ChromaMemoryStore) -> None:
    recorder = _Recorder()
    LifecycleRetriever(store=seed_demo, namespace=NS, now=NOW).invoke("editor", config={"callbacks": [recorder]})
    assert recorder.metadata["ls_retriever_name"] == "lifecycle_memory"
    assert recorder.metadata["ls_vector_store_provider"] == "Chroma"
    assert recorder.metadata["ls_embedding_provider"] == "UniversalSentenceEncoderEmbeddings"
    assert recorder.names == ["LifecycleRetriever"]


# ---------------------------------------------------------------- vectorised scoring


def test_snapshot_eligibility_matches_lifecycle_decision_record_by_record() -> None:
    import json
    from types import SimpleNamespace

    import numpy as np

    from langchain_lifecycle_memory.read.fusion import lifecycle_decision
    from langchain_lifecycle_memory.read.snapshot import build

    day = timedelta(days=1)
    records = []
    for i, status in enumerate(["active", "archived", "pending"] * 4):
        r = record(f"fact {i}", f"a{i}", f"v{i}", at=T0 + i * day, kind=("preference", "fact", "event")[i % 3])
        if status != "active":
            r = (
                r.transition(status, at=T0 + (i + 3) * day)
                if status == "archived"
                else r.model_copy(update={"status": MemoryStatus.PENDING})
            )
        if i % 4 == 1:
            r = r.model_copy(update={"expires_at": T0 + (i + 1) * day})
        if i % 5 == 2:  # expiry exactly at "now": expired (deadline <= now)
            r = r.model_copy(update={"expires_at": T0 + 6 * day})
        records.append(r)
    rows = SimpleNamespace(
        revision=None,
        ids=[r.id for r in records],
        documents=[json.dumps(r.to_value()) for r in records],
        vectors=np.ones((len(records), 2)),
    )
    snap = build(("memories", "u1"), rows)
    records = [snap.record(i) for i in range(len(snap))]  # in the snapshot's order
    options = [
        {"statuses": (MemoryStatus.ACTIVE,), "kinds": None, "as_of": None},
        {"statuses": None, "kinds": ("preference", "event"), "as_of": None},
        {"statuses": (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED), "kinds": None, "as_of": None},
        {"statuses": (MemoryStatus.ACTIVE,), "kinds": None, "as_of": T0 + 4 * day},  # valid_from == as_of
        {"statuses": None, "kinds": ("fact",), "as_of": T0 + 7 * day + timedelta(microseconds=1)},
    ]
    for opts in options:
        for include_expired in (False, True):
            now = T0 + 6 * day
            mask = snap.eligible(now=now, include_expired=include_expired, **opts)
            expected = [
                lifecycle_decision(r, now=now, include_expired=include_expired, **opts) is None for r in records
            ]
            assert mask.tolist() == expected, opts


def test_invoke_returns_exactly_the_kept_candidates_of_explain_in_order(store: ChromaMemoryStore) -> None:
    store.put_records([record(f"The user drinks tea number {i}.", "drink", f"tea {i}") for i in range(8)])
    store.put_records(
        [
            record("The user's sister Maya drinks coffee.", "drink", "coffee", entity="sister_maya"),
            record("用户喜欢喝茶", "drink", "茶", confidence=0.6),
        ]
    )
    for fusion in ("calibrated", "rrf"):
        retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW, k=4, fusion=fusion)
        for query in ("What do I like to drink?", "我喜欢喝什么？", "tea number 3"):
            docs = retriever.invoke(query)
            kept = retriever.explain(query).kept()
            assert [d.id for d in docs] == [c.record.id for c in kept]
            assert [d.metadata["scores"]["rrf"] for d in docs] == [round(c.rrf, 6) for c in kept]


def test_saturated_matches_are_ordered_by_evidence_not_by_recency(store: ChromaMemoryStore) -> None:
    """Both turns reach fused 1.0 under the threshold calibration; the full match must come first."""
    old, new = datetime(2023, 5, 1, tzinfo=timezone.utc), datetime(2024, 2, 25, tzinfo=timezone.utc)
    full = "Caroline and the user drank matcha tea in Kyoto."
    partial = "Caroline drank matcha tea at home."
    store.put_records(
        [
            MemoryRecord(namespace=NS, content=full, kind="episode", created_at=old, updated_at=old, valid_from=old),
            MemoryRecord(namespace=NS, content=partial, kind="episode", created_at=new, updated_at=new, valid_from=new),
        ]
    )
    query = "matcha tea Kyoto Caroline"
    retriever = LifecycleRetriever(store=store, namespace=NS, now=NOW)
    assert [c.fused for c in retriever.explain(query).kept()] == [1.0, 1.0]
    assert contents(retriever.invoke(query)) == [full, partial]
    # Ranking by the threshold calibration itself lets the newer, weaker turn win the tie.
    clipped = LifecycleRetriever(store=store, namespace=NS, now=NOW, rank_calibration=None)
    assert contents(clipped.invoke(query)) == [partial, full]


def test_a_misspelt_setting_is_an_error_not_ignored(mem_store: ChromaMemoryStore) -> None:
    with pytest.raises(ValueError, match="profile_fallbak"):
        LifecycleRetriever(store=mem_store, namespace=NS, profile_fallbak=0)  # type: ignore[call-arg]
