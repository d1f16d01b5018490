"""``causalverify prompt``: show the Experiment B prompt of a scenario, or a reference answer."""

from __future__ import annotations

from pathlib import Path

import click

from causalverify.cli._common import friendly_errors


@click.command()
@click.argument("suite_dir", type=click.Path(path_type=Path, file_okay=False))
@click.argument("scenario_id")
@click.option("--language", type=click.Choice(["r", "python"]), default="r", show_default=True)
@click.option(
    "--protocol", type=click.Choice(["paper", "default"]), default="default", show_default=True
)
@click.option(
    "--agent",
    default=None,
    help="Print this reference agent's answer instead of the prompt (e.g. textbook).",
)
@click.option(
    "--no-manifest",
    is_flag=True,
    help="Do not probe the environment; the default prompt then lists no packages.",
)
@friendly_errors
def prompt(
    suite_dir: Path,
    scenario_id: str,
    language: str,
    protocol: str,
    agent: str | None,
    no_manifest: bool,
) -> None:
    """Print the messages sent to a model for SCENARIO_ID of the suite in SUITE_DIR."""
    from causalverify.scenarios import load_suite
    from causalverify.scenarios.grid import SUITES

    if str(suite_dir) in SUITES and not suite_dir.is_dir():
        raise click.ClickException(
            f"{suite_dir} is a named suite, not a folder: build it with `causalverify build "
            f"--suite {suite_dir} --out DIR`, then `causalverify prompt DIR {scenario_id}`"
        )
    suite = load_suite(suite_dir, verify=False)
    scenario = suite.get(scenario_id)
    if agent is not None:
        from causalverify.reference import write_response

        text = write_response(
            agent,
            scenario,
            language=language,  # type: ignore[arg-type]
            protocol=protocol,  # type: ignore[arg-type]
        )
        click.echo(text, nl=False)
        return
    from causalverify.prompts import render_experiment_b

    manifest = None
    if protocol == "default" and not no_manifest:
        from causalverify.sandbox import environment_manifest

        manifest = environment_manifest()
    rendered = render_experiment_b(
        scenario,
        suite.read_data(scenario),
        language=language,  # type: ignore[arg-type]
        protocol=protocol,  # type: ignore[arg-type]
        manifest=manifest,
    )
    for message in rendered.messages:
        click.echo(f"===== {message.role} =====")
        click.echo(message.content, nl=False)
    click.echo(f"===== sha256 {rendered.sha256} =====")
