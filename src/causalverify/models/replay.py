"""``replay/<dir>[:<slug>]``: answers read back from the published cache format.

The folder holds one JSON per scenario × model named ``{scenario_id}_{model_slug}.json`` with an
``llm_response`` object ``{model, input_tokens, output_tokens, content, stop_reason}``. The slug
is taken from the spec (``replay/outputs:gpt-4o``) or, when the folder holds one slug only,
inferred. Scenario ids are matched exactly, then by number (``s001`` finds ``s01_<slug>.json``).
Replayed answers cost nothing now; their recorded token counts are kept.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from causalverify.errors import ProviderError
from causalverify.models.base import CellContext, ModelOptions
from causalverify.records import Message, ModelResponse

_FILE = re.compile(r"^(?P<sid>[^_]+)_(?P<slug>.+)\.json$")
_NUMBER = re.compile(r"^[A-Za-z]*0*(\d+)$")
TRUNCATED_STOP_REASONS = frozenset({"length", "max_tokens"})


def parse_replay_spec(rest: str) -> tuple[Path, str | None]:
    """Split ``<dir>[:<slug>]`` into the folder and the optional slug."""
    folder, sep, slug = rest.rpartition(":")
    if sep and folder and "/" not in slug and not Path(rest).exists():
        return Path(folder), slug
    return Path(rest), None


def _index(folder: Path) -> dict[str, dict[str, Path]]:
    """slug -> scenario id -> file."""
    out: dict[str, dict[str, Path]] = {}
    for path in sorted(folder.glob("*.json")):
        match = _FILE.match(path.name)
        if match:
            out.setdefault(match["slug"], {})[match["sid"]] = path
    return out


def _number(scenario_id: str) -> int | None:
    match = _NUMBER.match(scenario_id)
    return int(match[1]) if match else None


class ReplayProvider:
    """Serves stored answers; thread-safe (read-only after construction)."""

    kind = "replay"

    def __init__(self, folder: Path, *, spec: str, slug: str | None = None) -> None:
        if not folder.is_dir():
            raise ProviderError(f"{spec}: replay folder {folder} does not exist")
        index = _index(folder)
        if slug is None:
            if len(index) != 1:
                found = ", ".join(sorted(index)) or "none"
                raise ProviderError(
                    f"{spec}: say which model to replay as replay/{folder}:<slug>; slugs found: {found}"
                )
            slug = next(iter(index))
        if slug not in index:
            raise ProviderError(f"{spec}: no files {{scenario_id}}_{slug}.json in {folder}")
        self.spec = spec
        self.folder = folder
        self.slug = slug
        self._files = index[slug]
        self._by_number = {
            n: p for sid, p in self._files.items() if (n := _number(sid)) is not None
        }

    def _find(self, scenario_id: str) -> Path | None:
        if scenario_id in self._files:
            return self._files[scenario_id]
        number = _number(scenario_id)
        return self._by_number.get(number) if number is not None else None

    def answer(
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        context: CellContext | None,
    ) -> ModelResponse:
        """The stored answer for ``context.scenario`` or a cell error if there is none (an
        :class:`~causalverify.models.base.OfflineAgent`: it sees the scenario's id only)."""
        if context is None:
            raise ProviderError(f"{self.spec} needs the cell context to find the scenario")
        start = time.monotonic()
        sid = context.scenario.id
        path = self._find(sid)
        if path is None:
            return ModelResponse(content=None, error=f"no cached answer for {sid}", model=self.slug)
        try:
            record: Any = json.loads(path.read_text(encoding="utf-8"))
            llm = record["llm_response"]
            stop = llm.get("stop_reason")
            return ModelResponse(
                content=llm.get("content") or "",
                stop_reason=stop,
                truncated=stop in TRUNCATED_STOP_REASONS,
                input_tokens=int(llm.get("input_tokens") or 0),
                output_tokens=int(llm.get("output_tokens") or 0),
                latency_seconds=time.monotonic() - start,
                model=llm.get("model") or self.slug,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            return ModelResponse(
                content=None, error=f"unreadable cached answer {path.name}: {exc}", model=self.slug
            )
