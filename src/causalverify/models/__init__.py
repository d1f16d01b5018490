"""Model providers behind one interface, with retries, rate limiting, a response cache and costs.

``get_provider("openai/gpt-4o")``, ``"anthropic/<model>"``, ``"replay/<dir>[:<slug>]"``,
``"reference/<agent>"``. Vendor SDKs are imported only when such a provider is created, so
importing this package never imports ``openai`` or ``anthropic``.
"""

from __future__ import annotations

from causalverify.models.access import ModelAccess
from causalverify.models.base import CellContext, Model, ModelOptions, OfflineAgent, Provider, ask
from causalverify.models.cache import ResponseCache, default_cache_path
from causalverify.models.pricing import DEFAULT_PRICES, Price, PriceTable, load_prices
from causalverify.models.providers import KINDS, OFFLINE_KINDS, get_provider, is_offline, parse_spec
from causalverify.models.ratelimit import RateLimiter
from causalverify.models.retry import RetryPolicy

__all__ = [
    "DEFAULT_PRICES",
    "KINDS",
    "OFFLINE_KINDS",
    "CellContext",
    "Model",
    "ModelAccess",
    "ModelOptions",
    "OfflineAgent",
    "Price",
    "PriceTable",
    "Provider",
    "RateLimiter",
    "ResponseCache",
    "RetryPolicy",
    "ask",
    "default_cache_path",
    "get_provider",
    "is_offline",
    "load_prices",
    "parse_spec",
]
