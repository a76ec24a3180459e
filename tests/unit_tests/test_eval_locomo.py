"""LoCoMo evidence recall on a tiny synthetic conversation (never the real data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory.eval.__main__ import main
from langchain_lifecycle_memory.eval.locomo import (
    EvidenceStats,
    apply_audit,
    evaluate_locomo,
    find_audit_file,
    index_text,
    load_locomo,
    normalize_evidence,
    parse_session_date,
    recall_at_k,
)

CONVERSATION = [
    {
        "sample_id": "synthetic-1",
        "conversation": {
            "speaker_a": "Alice",
            "speaker_b": "Bob",
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                {"speaker": "Bob", "dia_id": "D2:1", "text": "My kayak trip to Norway was great."},
                {"speaker": "Alice", "dia_id": "D2:2", "text": "Pepper learned to swim."},
            ],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Alice", "dia_id": "D1:1", "text": "I adopted a beagle named Pepper."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Congrats! I bought a red kayak."},
                {
                    "speaker": "Alice",
                    "dia_id": "D1:3",
                    "text": "Look at this!",
                    "img_url": ["x"],
                    "blip_caption": "a photo of a lighthouse at sunset",
                },
            ],
        },
        "qa": [
            {
                "question": "Which lighthouse photo did Alice share?",
                "answer": "x",
                "evidence": ["D:1:03"],
                "category": 4,
            },
            {
                "question": "Where did the kayak trip go, Norway?",
                "answer": "x",
                "evidence": ["D2:1; D1:2"],
                "category": 1,
            },
            {
                "question": "When was the beagle adopted?",
                "answer": "x",
                "evidence": ["D1:1", "D9:9", "D"],
                "category": 2,
            },
            {"question": "Is Bob a pilot?", "adversarial_answer": "x", "evidence": ["D1:2"], "category": 5},
            {"question": "What did Pepper learn?", "answer": "x", "evidence": ["D1:2"], "category": 3},
        ],
    }
]
# Listed in another order than the questions, with question_ids that do not match positions.
AUDIT = [
    {"question_id": "locomo_0_qa1", "question": "what did pepper learn", "correct_evidence": ["D2:2"]},
    {"question_id": "locomo_0_qa7", "question": "When was the beagle adopted?", "correct_evidence": ["D1:1", "D2:02"]},
    {"question_id": "locomo_0_qa3", "question": "A question nobody asked?", "correct_evidence": ["D1:1"]},
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "synthetic.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return path


@pytest.fixture
def audit_file(tmp_path: Path) -> Path:
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(AUDIT), encoding="utf-8")
    return path


def test_session_dates_and_evidence_ids_are_normalised() -> None:
    assert parse_session_date("10:00 am on 9 June, 2023").isoformat() == "2023-06-09T10:00:00+00:00"
    assert parse_session_date("12:05 am on 1 January, 2024").hour == 0
    with pytest.raises(ValueError, match="session date"):
        parse_session_date("yesterday")
    ids, repaired, skipped = normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D1:3", "D1:3"])
    assert ids == ["D8:6", "D9:17", "D11:26", "D30:5", "D1:3"]
    assert (repaired, skipped) == (3, 1)


def test_load_keeps_categories_1_to_4_in_session_order_and_counts_what_was_fixed(data_file: Path) -> None:
    stats = EvidenceStats()
    [conv] = load_locomo(data_file, stats=stats)
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert [q.category for q in conv.questions] == ["4", "1", "2", "3"]
    assert [q.evidence for q in conv.questions] == [["D1:3"], ["D2:1", "D1:2"], ["D1:1"], ["D1:2"]]
    assert (stats.normalised, stats.skipped_malformed, stats.skipped_unknown) == (2, 1, 1)
    assert conv.asked_at.isoformat() == "2023-06-10T10:00:00+00:00"
    assert index_text(conv.turns[2]) == "Alice: Look at this! [image: a photo of a lighthouse at sunset]"
    assert index_text(conv.turns[4], "date+prev", conv.turns[3]).startswith("[9 June 2023] Alice: Pepper")
    assert "(after Bob: My kayak" in index_text(conv.turns[4], "prev", conv.turns[3])
    assert "after" not in index_text(conv.turns[3], "prev", conv.turns[2])  # not across sessions


def test_audit_is_matched_by_question_text_not_position(data_file: Path) -> None:
    conversations = load_locomo(data_file)
    stats = apply_audit(conversations, AUDIT)
    by_question = {q.question: q.evidence for q in conversations[0].questions}
    assert by_question["What did Pepper learn?"] == ["D2:2"]
    assert by_question["When was the beagle adopted?"] == ["D1:1", "D2:2"]
    assert by_question["Which lighthouse photo did Alice share?"] == ["D1:3"]  # untouched
    assert (stats.audit_entries, stats.audit_matched, stats.audit_unmatched) == (3, 2, ["locomo_0_qa3"])


def test_recall_is_the_share_of_evidence_among_the_top_k() -> None:
    assert recall_at_k(["D1:1", "D2:2"], ["D2:2", "D5:5", "D1:1"], 1) == 0.5
    assert recall_at_k(["D1:1", "D2:2"], ["D2:2", "D5:5", "D1:1"], 3) == 1.0
    assert recall_at_k(["D1:1"], [], 10) == 0.0
    with pytest.raises(ValueError, match="evidence"):
        recall_at_k([], ["D1:1"], 1)


def test_bm25_recall_per_category_with_and_without_audit(data_file: Path, audit_file: Path) -> None:
    fake = DeterministicFakeEmbedding(size=16)
    audited = evaluate_locomo(
        data_file, ks=(1, 2), audit=audit_file, retrievers=["bm25"], embeddings=fake, text_format="speaker"
    )
    r = audited["retrievers"]["bm25"]
    # lighthouse (caption) -> D1:3; Norway -> D2:1 then kayak -> D1:2; beagle -> D1:1 only; Pepper+learn -> D2:2
    assert r["recall@1"] == {"all": 0.75, "1": 0.5, "2": 0.5, "3": 1.0, "4": 1.0}
    assert r["recall@2"] == {"all": 0.875, "1": 1.0, "2": 0.5, "3": 1.0, "4": 1.0}
    assert audited["questions_by_category"] == {"all": 4, "1": 1, "2": 1, "3": 1, "4": 1}
    plain = evaluate_locomo(data_file, ks=(1,), audit=None, retrievers=["bm25"], embeddings=fake, text_format="speaker")
    assert plain["retrievers"]["bm25"]["recall@1"]["3"] == 0.0  # the unaudited (wrong) evidence D1:2
    assert plain["retrievers"]["bm25"]["recall@1"]["2"] == 1.0


def test_every_retriever_maps_results_back_to_dia_ids(data_file: Path) -> None:
    result = evaluate_locomo(
        data_file, ks=(5,), retrievers=["default-nothreshold", "dense", "bm25", "langgraph-inmemory"]
    )
    for name in ("default-nothreshold", "dense", "langgraph-inmemory"):
        assert result["retrievers"][name]["recall@5"]["all"] == 1.0, name  # 5 turns, k=5: everything
    assert set(result["median_injected_tokens"]) >= {"default-nothreshold", "dense", "bm25", "langgraph-inmemory"}
    assert result["text_format"] == "date+prev+next"  # context in the text: the turn-only cost is reported too
    turn_only = result["median_injected_tokens"]["dense-turn-only"]
    assert turn_only < result["median_injected_tokens"]["dense"]
    assert result["injected_recall_turn_only"]["dense"]["all"] == 1.0


def test_cli_writes_the_json_contract_and_finds_the_audit_next_to_the_data(data_file: Path, tmp_path: Path) -> None:
    (data_file.parent / "locomo_audit_errors.json").write_text(json.dumps(AUDIT), encoding="utf-8")
    assert find_audit_file(data_file) == data_file.parent / "locomo_audit_errors.json"
    out = tmp_path / "res" / "locomo.json"
    code = main(
        [
            "locomo",
            str(data_file),
            "--k",
            "1",
            "2",
            "--retrievers",
            "default",
            "bm25",
            "--text",
            "speaker",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["retrievers"]) == {"default", "bm25"}
    for metrics in data["retrievers"].values():
        assert set(metrics) == {"recall@1", "recall@2"}
        assert all(set(v) == {"all", "1", "2", "3", "4"} for v in metrics.values())
    assert isinstance(data["median_injected_tokens"]["default"], float)
    assert data["retrievers"]["bm25"]["recall@1"]["3"] == 1.0  # audited evidence was used


def test_cli_reports_a_missing_file_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["locomo", str(tmp_path / "nope.json")]) == 1
    assert "not found" in capsys.readouterr().err


def test_equal_turn_texts_do_not_break_the_langgraph_baseline(tmp_path: Path) -> None:
    data = json.loads(json.dumps(CONVERSATION))
    data[0]["conversation"]["session_2"].append(
        {"speaker": "Bob", "dia_id": "D2:3", "text": "Congrats! I bought a red kayak."}
    )
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = evaluate_locomo(
        path, ks=(6,), retrievers=["langgraph-inmemory"], embeddings=DeterministicFakeEmbedding(size=16)
    )
    assert result["retrievers"]["langgraph-inmemory"]["recall@6"]["all"] == 1.0
