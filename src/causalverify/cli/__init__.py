"""The ``causalverify`` command line.

Subcommands live in their own modules and are imported only when invoked, so ``causalverify --help``
stays fast and a broken optional dependency only affects the command that needs it. To add a
command, add one line to ``COMMANDS``: ``name -> "module:attribute"`` where the attribute is a
``click.Command``.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from causalverify import __version__

COMMANDS: dict[str, str] = {
    "build": "causalverify.cli.build:build",
    "canonical": "causalverify.cli.canonical:canonical",
    "run": "causalverify.cli.run:run",
    "report": "causalverify.cli.report:report",
    "analyze": "causalverify.cli.analyze:analyze",
    "diff": "causalverify.cli.diff:diff",
    "export": "causalverify.cli.export:export",
    "doctor": "causalverify.cli.doctor:doctor",
    "exec": "causalverify.cli.exec_:exec_",
    "score": "causalverify.cli.score:score",
    "audit": "causalverify.cli.audit:audit",
    "import-suite": "causalverify.cli.import_suite:import_suite",
    "compare": "causalverify.cli.compare:compare",
    "calibrate": "causalverify.cli.calibrate:calibrate",
    "freeze": "causalverify.cli.freeze:freeze",
    "verify": "causalverify.cli.verify:verify",
    "papers": "causalverify.cli.papers:papers",
    "prompt": "causalverify.cli.prompt:prompt",
    "r-packages": "causalverify.cli.r_packages:r_packages",
    "models": "causalverify.cli.models:models",
    "view": "causalverify.cli.view:view",
    "import-inspect": "causalverify.cli.import_inspect:import_inspect",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: Any = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="causalverify")
def main() -> None:
    """Execute LLM-written causal-inference workflows and score the number they compute."""
