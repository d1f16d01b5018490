"""``causalverify view``: where a run's report and cell explorer are, or serve them locally."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import click

from causalverify.cli._common import echo_json, friendly_errors


def _report_index(run_dir: Path) -> Path:
    for candidate in (run_dir / "report" / "index.html", run_dir / "index.html"):
        if candidate.is_file():
            return candidate.resolve()
    raise click.ClickException(
        f"no report in {run_dir}: write it with `causalverify report {run_dir}`"
    )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


def serve(folder: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server for ``folder`` on 127.0.0.1 only (``port`` 0 picks a free one)."""
    handler = functools.partial(_Quiet, directory=str(folder))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


@click.command("view")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--serve",
    "serve_it",
    is_flag=True,
    help="Serve the report folder on 127.0.0.1 (for browsers that refuse local files).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the paths (and URL) as JSON.")
@friendly_errors
def view(run_dir: Path, serve_it: bool, port: int, as_json: bool) -> None:
    """Print the path of RUN_DIR's report, whose cell explorer opens any cell.

    A cell's own address is index.html#cell/<scenario>/<model>/<language>/<sample> (each part
    URL-encoded); #cells?model=...&family=... opens the table filtered.
    """
    index = _report_index(run_dir)
    if not serve_it:
        if as_json:
            echo_json({"index": str(index), "url": index.as_uri()})
        else:
            click.echo(index)
        return
    server = serve(index.parent, port)
    url = f"http://127.0.0.1:{server.server_address[1]}/{index.name}"
    if as_json:
        echo_json({"index": str(index), "url": url})
    else:
        click.echo(f"serving {index.parent} at {url} (Ctrl-C to stop)")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
