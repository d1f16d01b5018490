"""``causalverify models``: the provider kinds, whether each can be used here, and the agents of
the offline reference panel."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import click

from causalverify.cli._common import echo_json, friendly_errors


def _providers() -> list[dict[str, Any]]:
    from causalverify.models.openai_provider import BASE_URL_ENV

    def ready(module: str, key: str) -> str:
        if importlib.util.find_spec(module) is None:
            return f"needs the '{module}' extra: pip install 'causalverify[{module}]'"
        if not os.environ.get(key):
            return f"{key} is not set (a local server with --base-url needs none)"
        return "ready"

    return [
        {
            "spec": "openai/<model>",
            "what": "any OpenAI-compatible server: hosted, vLLM, Ollama, ... (--base-url or "
            f"{' / '.join(BASE_URL_ENV)})",
            "status": ready("openai", "OPENAI_API_KEY"),
        },
        {
            "spec": "anthropic/<model>",
            "what": "the Anthropic Messages API (key ANTHROPIC_API_KEY)",
            "status": ready("anthropic", "ANTHROPIC_API_KEY"),
        },
        {
            "spec": "replay/<dir>[:<slug>]",
            "what": "answers cached in the published release's format (offline)",
            "status": "ready",
        },
        {
            "spec": "reference/<agent>",
            "what": "the offline reference panel (the agents below)",
            "status": "ready",
        },
    ]


@click.command("models")
@click.option("--json", "as_json", is_flag=True, help="Print providers and agents as JSON.")
@friendly_errors
def models(as_json: bool) -> None:
    """List the provider kinds a --models spec can name and the reference agents."""
    from rich.console import Console

    from causalverify.reference import AGENT_SUMMARIES, AGENTS

    providers = _providers()
    agents = [{"spec": f"reference/{a}", "behaviour": AGENT_SUMMARIES[a]} for a in AGENTS]
    if as_json:
        echo_json({"providers": providers, "reference_agents": agents})
        return
    console = Console()
    _print(console, "Providers", ("spec", "status", "what"), providers)
    _print(console, "Reference agents (the default --models of run)", ("spec", "behaviour"), agents)


def _print(console: Any, title: str, header: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    """A table of text: the spec column whole, the others wrapped at word boundaries."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for i, name in enumerate(header):
        table.add_column(name, no_wrap=i == 0, overflow="fold")
    for row in rows:
        table.add_row(*(str(row[name]) for name in header))
    console.print(table)
