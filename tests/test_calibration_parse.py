"""The confidence parser on real-looking answers, the prompts, and the reference responder."""

from __future__ import annotations

import pytest

from causalverify.calibration import calibration_messages, parse_confidences
from causalverify.calibration.elicit import record_from_response
from causalverify.calibration.parse import ParsedConfidences
from causalverify.store import CellKey, ModelResponse


def from_json(answer: str) -> ParsedConfidences:
    """``answer`` parsed, which must have been read as a JSON object: the prose fallback reads
    most of these answers too, and must not be what makes them pass."""
    parsed = parse_confidences(answer)
    assert parsed.notes == (), parsed.notes
    return parsed


def test_bare_json() -> None:
    p = from_json(
        '{"method_confidence": 0.9, "specification_confidence": 0.75, "numerical_confidence": 0.6}'
    )
    assert p.status == "ok" and p.scale == "unit" and not p.missing
    assert p.confidences == {"method": 0.9, "specification": 0.75, "numerical": 0.6}


def test_fenced_json_with_prose_around() -> None:
    answer = (
        "Looking back at my analysis, I am fairly sure about the design.\n\n"
        '```json\n{\n  "method_confidence": 0.95,\n  "specification_confidence": 0.8,\n'
        '  "numerical_confidence": 0.7\n}\n```\n\nThe main risk is the clustering choice.'
    )
    p = from_json(answer)
    assert p.status == "ok"
    assert p.confidences == {"method": 0.95, "specification": 0.8, "numerical": 0.7}


def test_percentages_and_numbers_as_strings() -> None:
    p = from_json(
        '{"method_confidence": "90%", "specification_confidence": "0.8", '
        '"numerical_confidence": " 65 % "}'
    )
    assert p.status == "ok" and p.scale == "percent+unit"
    assert p.confidences == pytest.approx({"method": 0.9, "specification": 0.8, "numerical": 0.65})


def test_whole_answer_on_a_0_100_scale() -> None:
    p = from_json(
        '{"method_confidence": 95, "specification_confidence": 0, "numerical_confidence": 70}'
    )
    assert p.status == "ok" and p.scale == "percent_scale"
    assert p.confidences == pytest.approx({"method": 0.95, "specification": 0.0, "numerical": 0.7})


def test_mixed_scale_marks_the_large_value_out_of_range() -> None:
    p = from_json(
        '{"method_confidence": 0.9, "specification_confidence": 85, "numerical_confidence": 0.4}'
    )
    assert p.status == "partial"
    assert p.confidences["specification"] is None
    assert p.missing == {"specification": "out of range: 85"}
    assert p.confidences["method"] == 0.9


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("null", "null"),
        ('"high"', "not a number: 'high'"),
        ("-0.2", "out of range: -0.2"),
        ("1.5", "out of range: 1.5"),
        ('"150%"', "out of range: 150%"),
        ("true", "not a number: True"),
        ("NaN", "not a finite number: nan"),
    ],
)
def test_invalid_values_are_missing_with_a_reason(value: str, reason: str) -> None:
    p = from_json(
        f'{{"method_confidence": 0.8, "specification_confidence": 0.7, '
        f'"numerical_confidence": {value}}}'
    )
    assert p.status == "partial"
    assert p.confidences["numerical"] is None and p.missing == {"numerical": reason}
    assert p.confidences["method"] == 0.8


def test_missing_key_is_recorded() -> None:
    p = from_json('{"method_confidence": 0.8, "numerical_confidence": 0.3}')
    assert p.missing == {"specification": "missing key"}
    assert p.confidences["specification"] is None and p.status == "partial"


def test_python_style_dict_and_trailing_comma() -> None:
    p = from_json(
        "{'method_confidence': 0.9, 'specification_confidence': 0.6, 'numerical_confidence': None,}"
    )
    assert p.confidences == {"method": 0.9, "specification": 0.6, "numerical": None}
    assert p.missing == {"numerical": "null"}


def test_last_object_wins_and_nested_objects_are_read() -> None:
    answer = (
        'My first thought was {"method_confidence": 0.5, "specification_confidence": 0.5, '
        '"numerical_confidence": 0.5} but on reflection:\n'
        '{"confidences": {"Method": 0.9, "specification": 0.8, "numerical-confidence": 0.2}}'
    )
    p = from_json(answer)
    assert p.confidences == {"method": 0.9, "specification": 0.8, "numerical": 0.2}


def test_braces_inside_strings_do_not_break_the_scan() -> None:
    # unbalanced braces and an escaped quote inside strings: a scan that counted them would
    # find no object (or a cut one) and leave the answer to the prose fallback
    answer = (
        r'{"note": "y ~ x | {z opens { twice and closes } once; an escaped \" quote {", '
        '"method_confidence": 0.7, "specification_confidence": 0.6, "numerical_confidence": 0.5}'
    )
    p = from_json(answer)
    assert p.status == "ok"
    assert p.confidences == {"method": 0.7, "specification": 0.6, "numerical": 0.5}


def test_prose_fallback_needs_the_word_confidence() -> None:
    p = parse_confidences(
        "Method confidence: 0.85\nSpecification confidence: 70%\nNumerical confidence: .4"
    )
    assert p.status == "ok" and p.notes == ("values read from prose (no JSON object)",)
    assert p.confidences == pytest.approx({"method": 0.85, "specification": 0.7, "numerical": 0.4})
    # numbers in prose without the word "confidence" are never taken
    assert parse_confidences("The numerical estimate: 0.25 per day.").status == "unparsable"


@pytest.mark.parametrize("answer", [None, "", "   ", "I cannot assess this.", "{not json}"])
def test_unparsable_answers_keep_all_three_as_missing(answer: str | None) -> None:
    p = parse_confidences(answer)
    assert p.status == "unparsable"
    assert p.confidences == {"method": None, "specification": None, "numerical": None}
    assert set(p.missing) == {"method", "specification", "numerical"}


def test_records_from_failures_are_statuses_not_drops() -> None:
    key = CellKey(scenario_id="s001", model="openai/m", language="r")
    failed = record_from_response(key, "default", [], ModelResponse(content=None, error="503"))
    assert failed.status == "api_error" and failed.missing["numerical"] == "api error: 503"
    empty = record_from_response(key, "paper", [], ModelResponse(content=""))
    assert empty.status == "no_response" and empty.confidences["method"] is None
    ok = record_from_response(
        key, "default", [], ModelResponse(content='{"method": 1, "specification": 1}')
    )
    assert ok.status == "partial" and ok.scale == "unit" and ok.confidence("method") == 1.0


def _messages(protocol: str, tolerance: float = 0.5) -> str:
    messages = calibration_messages(
        title="Title T",
        research_question="Did the policy raise y?",
        data_description="Columns: y, x.",
        data_file="data/s001.csv",
        answer="## 1. Identification Strategy\n...",
        protocol=protocol,  # type: ignore[arg-type]
        tolerance=tolerance,
    )
    assert [m.role for m in messages] == ["system", "user"]
    assert "method_confidence" in messages[0].content
    return messages[1].content


def test_prompts_state_the_criterion_of_their_protocol() -> None:
    default, paper = _messages("default"), _messages("paper")
    for text in (default, paper):
        assert "Did the policy raise y?" in text and "Columns: y, x." in text
        assert "## 1. Identification Strategy" in text and "data/s001.csv" in text
    assert "within 50% of the estimate a correct analysis computes on the same data" in default
    assert "fails to run" in default and "20%" not in default
    assert "within 20% of the true effect" in paper and "50%" not in paper
    assert "within 25%" in _messages("default", 0.25)
