"""Token prices (USD per million tokens) and cost accounting.

The default table covers a handful of common hosted models at their list prices when this table
was last revised; prices change, so pass your own with ``--prices FILE`` (TOML or JSON)::

    [models."gpt-4o"]
    input = 2.5
    output = 10.0

or in JSON ``{"models": {"gpt-4o": {"input": 2.5, "output": 10.0}}}`` (the top-level ``models``
key is optional). A model is matched exactly first, then by the longest table key it starts with
(``gpt-4o-2024-08-06`` takes the ``gpt-4o`` price). An unknown model costs 0 and is logged once.
"""

from __future__ import annotations

import json
import logging
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causalverify.errors import SetupError

log = logging.getLogger(__name__)

#: Revision date of :data:`DEFAULT_PRICES` (list prices, USD per 1M tokens).
PRICES_REVISED = "2025-08"


@dataclass(frozen=True)
class Price:
    """USD per one million input and output tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The cost of one call in USD."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


DEFAULT_PRICES: Mapping[str, Price] = {
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "claude-opus-4": Price(15.00, 75.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
}


def _as_price(name: str, value: Any) -> Price:
    if isinstance(value, Price):
        return value
    if isinstance(value, Mapping) and {"input", "output"} <= set(value):
        return Price(float(value["input"]), float(value["output"]))
    if isinstance(value, list | tuple) and len(value) == 2:
        return Price(float(value[0]), float(value[1]))
    raise SetupError(
        f"price of {name!r} must be {{input = <usd per 1M>, output = <usd per 1M>}}, got {value!r}"
    )


class PriceTable:
    """Model name -> :class:`Price`, with prefix matching and a one-time warning for unknowns.

    Parameters
    ----------
    overrides
        Entries added to (or replacing) the defaults: ``{model: {"input": x, "output": y}}``,
        ``{model: (x, y)}`` or ``{model: Price}``; a top-level ``"models"`` key is unwrapped.
    defaults
        Whether to start from :data:`DEFAULT_PRICES`.
    """

    def __init__(
        self, overrides: Mapping[str, Any] | None = None, *, defaults: bool = True
    ) -> None:
        table: dict[str, Price] = dict(DEFAULT_PRICES) if defaults else {}
        raw = dict(overrides or {})
        if isinstance(raw.get("models"), Mapping):
            raw = dict(raw["models"])
        for name, value in raw.items():
            table[str(name)] = _as_price(str(name), value)
        self._table = table
        self._unknown: set[str] = set()
        self._lock = threading.Lock()

    def lookup(self, model: str) -> Price | None:
        """The price of ``model`` (exact, else longest matching prefix), or ``None``."""
        if model in self._table:
            return self._table[model]
        short = model.rsplit("/", 1)[-1]
        candidates = [k for k in self._table if short.startswith(k) or model.startswith(k)]
        return self._table[max(candidates, key=len)] if candidates else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """USD cost of one call; 0.0 (logged once per model) when the model is not priced."""
        price = self.lookup(model)
        if price is None:
            with self._lock:
                first = model not in self._unknown
                self._unknown.add(model)
            if first:
                log.warning("no price known for model %r: its cost is counted as 0", model)
            return 0.0
        return price.cost(input_tokens, output_tokens)

    @property
    def unpriced(self) -> frozenset[str]:
        """Models asked about that had no price."""
        with self._lock:
            return frozenset(self._unknown)

    def as_dict(self) -> dict[str, dict[str, float]]:
        """The table as plain data (for run metadata)."""
        return {k: {"input": v.input, "output": v.output} for k, v in sorted(self._table.items())}


#: providers whose answers are paid for (offline agents and replayed answers cost nothing)
PAID_KINDS: tuple[str, ...] = ("openai/", "anthropic/")


def is_paid(spec: str) -> bool:
    """Whether the model ``spec`` names a provider whose answers are paid for."""
    return spec.strip().startswith(PAID_KINDS)


def unpriced_models(
    models: Iterable[str], prices: PriceTable | Mapping[str, Any] | None = None
) -> list[str]:
    """The paid models among ``models`` (in order, once each) that have no known price."""
    table = prices if isinstance(prices, PriceTable) else PriceTable(prices)
    return [m for m in dict.fromkeys(models) if is_paid(m) and table.lookup(m) is None]


def format_cost(cost_usd: float | None, unpriced: Sequence[str] = (), *, hint: bool = True) -> str:
    """The one way a cost is shown: ``$0.0123``; ``unpriced`` when a paid model had no known
    price (its answers were counted as costing nothing, so ``$0.0000`` would be false), naming
    the models with the fix when ``hint``; ``–`` for no value.

    Parameters
    ----------
    cost_usd
        The priced part of the cost (None: nothing to show, e.g. a cost per success without
        a success).
    unpriced
        The models whose answers in that cost had no price.
    hint
        Name the models and say how to price them (a closing line); off in a table cell.
    """
    if not unpriced:
        return "–" if cost_usd is None else f"${cost_usd:.4f}"
    priced = f"${cost_usd:.4f} + " if cost_usd else ""
    if not hint:
        return f"{priced}unpriced"
    return f"{priced}unpriced ({', '.join(unpriced)}: no known price; give --prices FILE)"


def cost_text(
    cost_usd: float, models: Iterable[str], prices: PriceTable | Mapping[str, Any] | None = None
) -> str:
    """``cost_usd`` of answers of ``models`` as :func:`format_cost` shows it, the unpriced
    models found in ``prices`` (the default table with the user's additions)."""
    return format_cost(cost_usd, unpriced_models(models, prices))


def load_prices(path: Path) -> dict[str, Any]:
    """Read a user price file (``.toml`` or ``.json``) into a mapping for :class:`PriceTable`.

    Raises
    ------
    SetupError
        If the file is missing or malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SetupError(f"cannot read price file {path}: {exc}") from exc
    try:
        data: Any = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise SetupError(f"price file {path} is not valid {path.suffix or 'JSON'}: {exc}") from exc
    if not isinstance(data, dict):
        raise SetupError(f"price file {path} must hold a table of models")
    PriceTable(data, defaults=False)  # validate now, with a clear message
    return data
