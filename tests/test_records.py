"""The records at the bottom of the layers, and the one prompt hash every store records."""

from __future__ import annotations

import hashlib

from causalverify.calibration.elicit import record_from_response
from causalverify.papers.run import Job, _call
from causalverify.prompts import messages_sha256 as prompts_hash
from causalverify.records import CellKey, Message, ModelResponse, messages_sha256

MESSAGES = [Message(role="system", content="Sé breve."), Message(role="user", content="q: ∆?")]
#: canonical JSON: sorted keys, no spaces, UTF-8 (not ASCII escapes)
EXPECTED = hashlib.sha256(
    '[{"content":"Sé breve.","role":"system"},{"content":"q: ∆?","role":"user"}]'.encode()
).hexdigest()


class Echo:
    """A provider that answers with a fixed text."""

    spec = "openai/echo"

    def complete(self, messages: object, *, options: object, sample: int = 0) -> ModelResponse:
        return ModelResponse(content="fine")


def test_one_prompt_hash_for_experiment_b_calibration_and_experiment_a() -> None:
    assert messages_sha256(MESSAGES) == EXPECTED
    assert prompts_hash(MESSAGES) == EXPECTED  # Experiment B re-exports the same function
    key = CellKey(scenario_id="s001", model="m", language="r")
    calibration = record_from_response(key, "default", MESSAGES, ModelResponse(content="x"))
    assert calibration.prompt_sha256 == EXPECTED
    job = Job("answers", ("p", "m", "standard"), "m", MESSAGES)
    _, exchange = _call(job, Echo(), options=None)  # type: ignore[arg-type]
    assert exchange.prompt_sha256 == EXPECTED
