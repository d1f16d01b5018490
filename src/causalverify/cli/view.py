"""``causalverify view``: where a run's report and cell explorer are, or serve them locally."""

from __future__ import annotations

import errno
import functools
import http
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


#: the only names a request may give in its Host header (with or without the served port)
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def loopback_host(value: str | None, port: int) -> bool:
    """Whether a Host header names this server by a loopback name.

    A page on any other name (``evil.example`` whose DNS answer was switched to 127.0.0.1, "DNS
    rebinding") is refused, so it cannot read the report through the browser.
    """
    if value is None:
        return False
    host = value.strip().lower()
    if host.startswith("["):  # an IPv6 literal: [::1] or [::1]:port
        name, _, after = host.partition("]")
        name, given = name + "]", after.removeprefix(":")
        if after and (not after.startswith(":") or given != str(port)):
            return False
    else:
        name, sep, given = host.partition(":")
        if sep and given != str(port):
            return False
    return name in LOOPBACK_HOSTS


class _ReportHandler(http.server.SimpleHTTPRequestHandler):
    """Files of the report folder, answered only to requests that name a loopback host."""

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        hosts = self.headers.get_all("Host") or []
        port = int(self.connection.getsockname()[1])  # the port this request came in on
        if len(hosts) != 1 or not loopback_host(hosts[0], port):
            self.send_error(
                http.HTTPStatus.MISDIRECTED_REQUEST,
                "Misdirected Request",
                "this server answers only to the Host 127.0.0.1, localhost or [::1]",
            )
            return False
        return True

    def log_message(self, format: str, *args: object) -> None:
        return


def serve(folder: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server for ``folder`` on 127.0.0.1 only (``port`` 0 picks a free one), answering only
    requests whose Host header is a loopback name (see :func:`loopback_host`)."""
    handler = functools.partial(_ReportHandler, directory=str(folder))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


@click.command("view")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--serve",
    "serve_it",
    is_flag=True,
    help="Serve the report folder on 127.0.0.1 (for browsers that refuse local files); "
    "requests naming any host but 127.0.0.1, localhost or [::1] are refused.",
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
    try:
        server = serve(index.parent, port)
    except OSError as exc:
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be used ({exc.strerror})"
        raise click.ClickException(
            f"port {port} on 127.0.0.1 {why}; pass another --port, or --port 0 for a free one"
        ) from exc
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
