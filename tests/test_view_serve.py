"""``causalverify view --serve`` answers only requests that name it by a loopback host, so a page
whose DNS name was rebound to 127.0.0.1 cannot read the report (which holds every canonical)."""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from causalverify.cli.view import serve

CLI = (sys.executable, "-c", "from causalverify.cli import main; main()")
SECRET = b"<html>canonical 1.2345</html>"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("view") / "report"
    folder.mkdir()
    (folder / "index.html").write_bytes(SECRET)
    return folder


@pytest.fixture(scope="module")
def port(report: Path) -> Iterator[int]:
    """One server for the module: the tests only send it requests, and each request is answered
    on its own. A short poll interval, since ``shutdown`` waits for the loop's next poll."""
    server = serve(report, 0)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _get(port: int, host: str, method: str = "GET") -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, "/index.html", headers={"Host": host})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.0.0.1:{port}", "localhost", "localhost:{port}", "LOCALHOST", "[::1]:{port}"],
)
def test_a_loopback_host_is_served(port: int, host: str) -> None:
    assert _get(port, host.format(port=port)) == (200, SECRET)


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1.evil.example:{port}",
        "localhost.evil.example",
        "localhost.",
        "127.0.0.2:{port}",
        "127.0.0.1:1",  # another port's name
        "[::1]:1",
        "localhost:{port}:{port}",
        "",
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_foreign_host_is_refused(port: int, host: str, method: str) -> None:
    status, body = _get(port, host.format(port=port), method)
    assert status == 421
    assert b"canonical" not in body
    if method == "GET":
        assert b"answers only to the Host" in body


def test_a_request_without_or_with_two_hosts_is_refused(port: int) -> None:
    missing = _raw(port, b"GET /index.html HTTP/1.0\r\n\r\n")
    twice = _raw(
        port,
        b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n"
        b"Connection: close\r\n\r\n",
    )
    for answer in (missing, twice):
        assert answer.startswith(b"HTTP/1.0 421"), answer[:80]
        assert b"canonical" not in answer


def test_view_serve_refuses_a_rebound_name(report: Path) -> None:
    # the command itself, as a user starts it
    with subprocess.Popen(
        [*CLI, "view", str(report.parent), "--serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode()
            match = re.search(r"http://127\.0\.0\.1:(\d+)/index\.html", line)
            assert match, line
            served = int(match.group(1))
            assert _get(served, f"rebind.evil.example:{served}")[0] == 421
            assert _get(served, f"127.0.0.1:{served}") == (200, SECRET)
        finally:
            proc.terminate()
