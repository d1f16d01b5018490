"""Cells executed on Dask workers (a LocalCluster on loopback) store what a local run stores, even
when a worker is killed mid-run; a worker without a working sandbox refuses."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from causalverify.errors import SandboxUnavailableError
from causalverify.models import ModelAccess
from causalverify.runner import RunConfig, run_benchmark
from causalverify.runner.summary import ProgressEvent
from causalverify.sandbox.dask import LOOPBACK_ANY_PORT, DaskSandbox
from causalverify.store import RunStore, stable_view
from run_e2e_helpers import PanelRun

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed"),
]


@pytest.fixture(scope="module")
def local_run(
    reference_panel: PanelRun, tmp_path_factory: pytest.TempPathFactory
) -> tuple[RunConfig, list[dict[str, Any]]]:
    """The session's local run of the reference panel, and a configuration that writes elsewhere."""
    root = tmp_path_factory.mktemp("dask")
    config = dataclasses.replace(
        reference_panel.config,
        out_dir=root / "local",
        access=ModelAccess(cache_path=root / "c.sqlite"),
    )
    return config, [stable_view(r) for r in reference_panel.records]


#: the agents of the run that loses a worker: textbook (correct), naive (wrong), fragile (its
#: scripts fail, a package is missing, ...) and mute (prints no estimate)
KILLED_RUN_AGENTS = (
    "reference/textbook",
    "reference/naive",
    "reference/fragile",
    "reference/mute",
)


def _cells(out: Path) -> list[dict[str, Any]]:
    with RunStore.open(out) as store:
        return [stable_view(r) for r in store.iter_cells()]


def test_a_dask_run_with_a_worker_killed_mid_run_equals_a_local_run(
    local_run: tuple[RunConfig, list[dict[str, Any]]],
) -> None:
    """Half the panel (four agents whose cells end correct, wrong, failed and without an
    estimate; 32 cells, R and Python, every family) on a cluster at a scheduler's address, one of
    whose two workers is killed mid-run, stores exactly what the local run stores: the cells run
    on the workers equal local ones, and the killed worker's scripts go elsewhere, no cell lost."""
    from distributed import LocalCluster

    config, panel = local_run
    expected = [v for v in panel if v["key"]["model"] in KILLED_RUN_AGENTS]
    assert len({v["status"] for v in expected}) >= 3, {v["status"] for v in expected}
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=LOOPBACK_ANY_PORT,
    ) as cluster:
        probe = DaskSandbox(scheduler=cluster.scheduler_address)
        pids = probe.worker_pids()
        probe.close()
        victim = sorted(pids.values())[0]
        killed = threading.Event()

        def progress(event: ProgressEvent) -> None:
            if event.kind == "cell" and event.done >= 10 and not killed.is_set():
                os.kill(victim, signal.SIGKILL)  # the nanny restarts it; its script goes elsewhere
                killed.set()

        dask = dataclasses.replace(
            config,
            out_dir=config.out_dir.parent / "dask-killed",
            executor="dask",
            scheduler=cluster.scheduler_address,
            models=KILLED_RUN_AGENTS,
        )
        summary = run_benchmark(dask, progress=progress)
    assert killed.is_set()
    assert summary.computed == len(expected) == 32
    assert _cells(dask.out_dir) == expected
    with RunStore.open(dask.out_dir) as store:
        policy = store.meta()["sandbox_policy"]["policy"]
    assert policy["kind"] == "dask" and policy["scheduler"] == cluster.scheduler_address


def test_a_run_without_a_scheduler_starts_its_own_cluster(
    local_run: tuple[RunConfig, list[dict[str, Any]]],
) -> None:
    """Without a scheduler, ``run_benchmark`` starts a local cluster of ``workers`` processes,
    runs its cells there and stops it: a small run (one agent in both languages, 8 cells, on a
    cluster of one worker) stores the same cells as the local run of the whole panel."""
    config, expected = local_run
    models = ("reference/textbook",)
    dask = dataclasses.replace(
        config,
        out_dir=config.out_dir.parent / "dask-own",
        executor="dask",
        models=models,
        workers=1,
    )
    wanted = [v for v in expected if v["key"]["model"] in models]
    summary = run_benchmark(dask)
    assert summary.computed == len(wanted) == 8
    assert _cells(dask.out_dir) == wanted
    with RunStore.open(dask.out_dir) as store:
        policy = store.meta()["sandbox_policy"]["policy"]
    assert policy["kind"] == "dask" and policy["workers"] == 1
    assert policy["scheduler"] == "local cluster on 127.0.0.1"


def test_a_worker_without_a_sandbox_refuses() -> None:
    from distributed import LocalCluster

    # the workers cannot find bubblewrap: the run must not start, let alone run unprotected
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=LOOPBACK_ANY_PORT,
            env={"PATH": "/nonexistent"},
        ) as cluster,
        pytest.raises(SandboxUnavailableError, match="refuse"),
    ):
        DaskSandbox(scheduler=cluster.scheduler_address)


def test_dask_settings_are_checked(local_run: tuple[RunConfig, list[dict[str, Any]]]) -> None:
    config, _ = local_run
    with pytest.raises(ValueError, match="executor dask"):
        dataclasses.replace(config, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="executor"):
        dataclasses.replace(config, executor="ray")  # type: ignore[arg-type]


def test_a_local_cluster_starts_while_the_default_dashboard_port_is_taken() -> None:
    # another program (or another run's cluster) holds 8787 on every interface: the local
    # cluster's HTTP server must go to a free loopback port, without a warning
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            taken.bind(("0.0.0.0", 8787))
        except OSError:
            pass  # something already holds it, which is the case under test
        else:
            taken.listen()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            box = DaskSandbox(workers=1)
        try:
            link = box.client.dashboard_link
            assert link.startswith("http://127.0.0.1:") and ":8787" not in link, link
        finally:
            box.close()
