"""Click options that several commands share, so each is spelled (and validated) one way.

Each factory returns a decorator; a command names the options it takes, e.g.::

    @base_url_option()
    @cache_option()
    @quiet_option
    def command(base_url: str | None, cache_path: Path | None, quiet: bool) -> None: ...
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from causalverify.models import ModelAccess, ModelOptions

F = TypeVar("F", bound=Callable[..., Any])

#: values of ``--format`` for a published per-cell table or release
PUBLISHED_FORMATS: tuple[str, ...] = ("causalverify-2026",)
#: how the interval of a rate is computed (see ``causalverify.analysis.CI_METHODS``)
CI_CHOICES: tuple[str, ...] = ("cluster", "bootstrap", "wilson")
#: what a ranking ranks: models (languages pooled) or each (model, language) pair
UNITS: tuple[str, ...] = ("model", "model_language")


def warm_option() -> Callable[[F], F]:
    """``--warm/--no-warm``: fork Python cells from a preloaded interpreter (the default)."""
    return click.option(
        "--warm/--no-warm",
        default=None,
        help="Fork Python cells from an interpreter that has the analysis packages loaded "
        "[default: on; the setting CAUSALVERIFY_WARM=0 turns it off]. Results are the same.",
    )


def base_url_option(help: str = "Server URL for API providers.") -> Callable[[F], F]:
    """``--base-url``: the server URL for API (``openai``/``anthropic``) providers."""
    return click.option("--base-url", default=None, help=help)


def cache_option() -> Callable[[F], F]:
    """``--cache`` (parameter ``cache_path``): the response cache file."""
    return click.option(
        "--cache",
        "cache_path",
        default=None,
        type=click.Path(dir_okay=False, path_type=Path),
        help="Response cache file [default: the user-wide cache].",
    )


def prices_option() -> Callable[[F], F]:
    """``--prices`` (parameter ``prices_path``): token price overrides for API models."""
    return click.option(
        "--prices",
        "prices_path",
        default=None,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Token price overrides (TOML or JSON, USD per million tokens).",
    )


def max_rpm_option() -> Callable[[F], F]:
    """``--max-rpm``: a client-side cap on model requests per minute (positive)."""
    return click.option(
        "--max-rpm",
        default=None,
        type=click.FloatRange(min=0, min_open=True),
        help="Client-side limit on model requests per minute.",
    )


def model_concurrency_option(default: int = 8) -> Callable[[F], F]:
    """``--model-concurrency`` (parameter ``workers``): model calls in flight at once.

    ``--workers`` means cells executing at once (``run``, ``verify``); a command that only asks
    models refuses it with a pointer here instead of giving it a second meaning.
    """

    def refuse(ctx: click.Context, param: click.Parameter, value: object) -> None:
        if value is not None:
            raise click.UsageError(
                "--workers counts cells executing at once (run, verify); model calls in flight "
                "are --model-concurrency",
                ctx,
            )

    def decorate(func: F) -> F:
        func = click.option("--workers", hidden=True, callback=refuse, expose_value=False)(func)
        return click.option(
            "--model-concurrency",
            "workers",
            default=default,
            show_default=True,
            type=click.IntRange(min=1),
            help="Model calls in flight at once.",
        )(func)

    return decorate


def model_access(
    *,
    concurrency: int,
    base_url: str | None = None,
    cache_path: Path | None = None,
    prices_path: Path | None = None,
    max_rpm: float | None = None,
    options: ModelOptions | None = None,
) -> ModelAccess:
    """The :class:`~causalverify.models.ModelAccess` of a command, from its model-access
    options (``--model-concurrency``, ``--base-url``, ``--cache``, ``--prices``, ``--max-rpm``
    and the generation options of ``run``)."""
    from causalverify.models import ModelAccess, ModelOptions, load_prices

    return ModelAccess(
        base_url=base_url,
        cache_path=cache_path,
        prices=load_prices(prices_path) if prices_path is not None else None,
        max_requests_per_minute=max_rpm,
        concurrency=concurrency,
        options=options if options is not None else ModelOptions(),
    )


#: ``--quiet``: no progress bar
quiet_option = click.option("--quiet", is_flag=True, help="No progress bar.")


def published_format_option(help: str = "Layout of --cells.") -> Callable[[F], F]:
    """``--format`` (parameter ``fmt``): the layout of a published table or release."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(PUBLISHED_FORMATS),
        default=PUBLISHED_FORMATS[0],
        show_default=True,
        help=help,
    )


def unit_option() -> Callable[[F], F]:
    """``--unit``: what is ranked (see :data:`UNITS`)."""
    return click.option(
        "--unit",
        type=click.Choice(UNITS),
        default="model",
        show_default=True,
        help="What is ranked: models (languages pooled) or each (model, language) pair.",
    )


def resamples_option() -> Callable[[F], F]:
    """``--resamples``: bootstrap resamples for the rank-correlation intervals."""
    return click.option(
        "--resamples",
        type=click.IntRange(min=1),
        default=1000,
        show_default=True,
        help="Bootstrap resamples for the rank-correlation intervals.",
    )


def ci_option() -> Callable[[F], F]:
    """``--ci``: the interval of every rate (scenario-clustered by default)."""
    return click.option(
        "--ci",
        type=click.Choice(CI_CHOICES),
        default="cluster",
        show_default=True,
        help="Intervals: cluster = clustered standard error by scenario, t on C-1 df; "
        "bootstrap = scenario-cluster percentile bootstrap (--seed, --resamples; recorded); "
        "wilson = every cell independent (single sample, single language).",
    )


def out_folder_option(help: str) -> Callable[[F], F]:
    """``--out DIR``: a folder the command writes, ``None`` when not given."""
    return click.option(
        "--out", type=click.Path(file_okay=False, path_type=Path), default=None, help=help
    )


def json_option(help: str) -> Callable[[F], F]:
    """``--json``: print the result as JSON (the ``as_json`` parameter)."""
    return click.option("--json", "as_json", is_flag=True, help=help)
