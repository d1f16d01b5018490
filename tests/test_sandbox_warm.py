"""What is new on the warm path: cells forked from one preloaded interpreter must not reach it or
each other, and must print exactly what a cold run prints.

Every test in test_sandbox*.py already runs warm and cold (the ``sandbox`` fixture in conftest);
these are the attacks that only make sense when cells share a parent.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from causalverify.models import ModelAccess, get_provider
from causalverify.runner import REFERENCE_PANEL, RunConfig, default_stages, run_benchmark
from causalverify.sandbox import ExecResult, Limits
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.store import CellRecord, RunStore
from fake_openai import FakeOpenAIServer, Reply
from run_e2e_helpers import PanelRun, only_language

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]
FAST = Limits(wall_seconds=30, cpu_seconds=20, memory_mb=1024, max_processes=32)
CSV = b"x,y\n1,2.0\n2,4.1\n3,5.9\n4,8.2\n"


@pytest.fixture(scope="module")
def warm() -> Iterator[BwrapSandbox]:
    box = BwrapSandbox(warm=True)
    assert box.warm is not None
    state = box.warm.start()
    assert state.running, state
    assert "pandas" in state.preloaded and "statsmodels.api" in state.preloaded
    yield box
    box.close()


@pytest.fixture(scope="module")
def cold() -> BwrapSandbox:
    return BwrapSandbox(warm=False)


def interpreter_pid(box: BwrapSandbox) -> int:
    assert box.warm is not None
    proc = box.warm._live.proc
    assert proc is not None and proc.poll() is None, "the warm interpreter is not running"
    return proc.pid


def run(box: BwrapSandbox, code: str, limits: Limits = FAST) -> ExecResult:
    return box.run(code, "python", {"data/s001.csv": CSV}, limits)


def test_a_cell_runs_warm_and_pays_no_import(warm: BwrapSandbox) -> None:
    pid = interpreter_pid(warm)
    code = "import sys\nprint('pandas' in sys.modules, 'statsmodels.api' in sys.modules)\n"
    res = run(warm, code)
    assert res.status == "ok", res
    assert res.stdout == "True True\n"  # already imported: the cell was forked warm
    assert interpreter_pid(warm) == pid


def test_patching_pandas_does_not_reach_the_next_cell(warm: BwrapSandbox) -> None:
    patch = (
        "import pandas as pd, numpy as np, statsmodels.api as sm\n"
        "pd.DataFrame.mean = lambda self, *a, **k: 42\n"
        "pd.read_csv = lambda *a, **k: 'forged'\n"
        "np.mean = lambda *a, **k: -1\n"
        "sm.OLS = None\n"
        "import sys; sys.modules['pandas'].FORGED = True\n"
        "print(pd.DataFrame({'a': [1, 2]}).mean())\n"
    )
    assert run(warm, patch).stdout == "42\n"
    check = (
        "import pandas as pd, numpy as np, statsmodels.api as sm\n"
        "d = pd.read_csv('data/s001.csv')\n"
        "print(float(d['y'].mean()), float(np.mean([1, 3])), sm.OLS is not None, "
        "hasattr(pd, 'FORGED'))\n"
    )
    res = run(warm, check)
    assert res.status == "ok", res
    assert res.stdout == "5.05 2.0 True False\n"


def test_environment_files_and_globals_do_not_leak(warm: BwrapSandbox) -> None:
    plant = (
        "import os, builtins\n"
        "os.environ['LEAK'] = '1'; builtins.LEAK = 1\n"
        "for p in ('/tmp/leak', '/scratch/leak', 'leak2'):\n"
        "    open(p, 'w').write('x')\n"
        "try:\n    open('/dev/shm/leak', 'w').write('x'); print('shm written')\n"
        "except OSError as e:\n    print(type(e).__name__)\n"
    )
    assert run(warm, plant).status == "ok"
    look = (
        "import os, builtins\n"
        "print('LEAK' in os.environ, hasattr(builtins, 'LEAK'), os.path.exists('/tmp/leak'), "
        "sorted(os.listdir('.')), os.path.exists('/dev/shm/leak'))\n"
    )
    res = run(warm, look)
    assert res.status == "ok", res
    assert res.stdout == "False False False ['data'] False\n"


def test_a_cell_sees_only_its_own_descriptors(warm: BwrapSandbox) -> None:
    # the interpreter's socket or another cell's pipes would let a cell start or forge cells
    code = "import os\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd')))\n"
    res = run(warm, code)
    assert res.status == "ok", res
    fds = [int(f) for f in res.stdout.strip("[]\n").split(", ")]
    # stdin, stdout, stderr, the fit log and the descriptor listdir itself holds open
    assert len(fds) <= 5 and fds[:3] == [0, 1, 2], fds


def test_killing_every_process_it_can_see_leaves_the_interpreter(warm: BwrapSandbox) -> None:
    pid = interpreter_pid(warm)
    code = (
        "import os, signal\n"
        "print('ppid', os.getppid(), 'pid', os.getpid())\n"
        "for target in (os.getppid(), 0, -1):\n"
        "    try:\n        os.kill(target, signal.SIGKILL); print('sent', target)\n"
        "    except OSError as e:\n        print(target, type(e).__name__)\n"
        "visible = sorted(p for p in os.listdir('/proc') if p.isdigit())\n"
        "print('visible', visible)\n"
    )
    res = run(warm, code)
    assert "ppid 0 pid 1" in res.stdout, res  # the parent lives outside the cell's namespace
    assert "visible ['1']" in res.stdout
    after = run(warm, "print('still warm')\n")
    assert after.stdout == "still warm\n"
    assert interpreter_pid(warm) == pid


@pytest.mark.slow
def test_filling_memory_ends_the_cell_not_the_interpreter(warm: BwrapSandbox) -> None:
    pid = interpreter_pid(warm)
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024 * 1024))\n"
    res = run(warm, code, Limits(wall_seconds=30, cpu_seconds=20, memory_mb=1024))
    assert res.status == "memory_limit", res
    assert run(warm, "print(1)\n").stdout == "1\n"
    assert interpreter_pid(warm) == pid


def test_concurrent_cells_cannot_meet_on_an_abstract_socket(warm: BwrapSandbox) -> None:
    # abstract Unix sockets belong to the network namespace: each cell must have its own.
    # Both cells print when (host wall clock) they listened and dialled, so the test shows the
    # dialler tried while the listener was listening, rather than assuming it from the timing.
    # Both stop at the same moment; a warm cell is listening within about 0.1 s, under heavy
    # load too, so the 2 s window leaves ample room for the dialler's tries to overlap it
    end = time.time() + 2.0
    listener = (
        "import socket, time\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "s.bind('\\0causalverify-meet'); s.listen(1)\n"
        "print('listening', repr(time.time()), flush=True)\n"
        f"s.settimeout(max(0.0, {end!r} - time.time()))\n"
        "try:\n    s.accept(); print('MET')\n"
        "except OSError as e:\n    print('alone', type(e).__name__)\n"
        "print('until', repr(time.time()))\n"
    )
    dialer = (
        "import socket, time\n"
        "while True:\n"
        "    try:\n"
        "        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "        c.connect('\\0causalverify-meet'); print('MET'); break\n"
        "    except OSError as e:\n        print('refused', type(e).__name__, repr(time.time()))\n"
        f"    if time.time() > {end!r} - 0.2:\n        break\n"
        "    time.sleep(0.05)\n"
    )
    results: dict[str, ExecResult] = {}
    thread = threading.Thread(target=lambda: results.update(listen=run(warm, listener)))
    thread.start()
    time.sleep(0.2)
    results["dial"] = run(warm, dialer)
    thread.join()
    assert "MET" not in results["dial"].stdout, results
    assert "MET" not in results["listen"].stdout, results
    heard = {line.split()[0]: line.split()[-1] for line in results["listen"].stdout.splitlines()}
    opened, closed = float(heard["listening"]), float(heard["until"])
    tries = [line.split() for line in results["dial"].stdout.splitlines()]
    assert tries and all(t[:2] == ["refused", "ConnectionRefusedError"] for t in tries), results
    # some tries fell while the other cell was listening (and were refused all the same)
    assert any(opened < float(t[2]) < closed for t in tries), results


def test_lingering_children_die_with_the_cell(warm: BwrapSandbox) -> None:
    code = (
        "import subprocess\n"
        "subprocess.Popen(['sh', '-c', 'sleep 60'], start_new_session=True)\n"
        "print('left a child')\n"
    )
    started = time.monotonic()
    res = run(warm, code)
    assert res.status == "ok" and res.stdout == "left a child\n", res
    assert time.monotonic() - started < 10  # not held open by the orphan
    res = run(warm, "import os\nprint(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n")
    assert res.stdout == "['1']\n"


@pytest.mark.slow
def test_cells_print_exactly_what_cold_cells_print(warm: BwrapSandbox, cold: BwrapSandbox) -> None:
    scripts = [
        # a typical workflow: pandas, a formula fit with clustered errors, the fit log
        (
            "import pandas as pd, statsmodels.formula.api as smf\n"
            "d = pd.read_csv('data/s001.csv')\n"
            "fit = smf.ols('y ~ x', data=d).fit(cov_type='HC1')\n"
            "print(fit.summary().tables[1])\nprint('ESTIMATE:', round(fit.params['x'], 6))\n"
        ),
        # an uncaught exception: the same traceback, starting at the script
        "import pandas as pd\nd = pd.read_csv('data/s001.csv')\nprint(d['missing'])\n",
        # exits of every kind
        "import sys\nprint('before')\nsys.exit('bye')\n",
        "raise SystemExit(3)\n",
        "import os, sys\nprint(sys.argv, __name__, __file__, os.getcwd(), sys.path[0])\n",
        "import atexit\natexit.register(lambda: print('at exit'))\nprint('main')\n",
        "import sys\nprint(sys.stdout.encoding, sys.stderr.errors, sys.stdin.read() == '')\n",
        "import os\nprint(os.getuid() != 0, sorted(os.environ), os.listdir('/code'))\n",
        "import missing_package_xyz\n",
        # a package whose import replaces a global hook is not preloaded: the cell imports it
        "import warnings, sys\nprint(warnings.formatwarning.__name__, 'rdrobust' in sys.modules)\n",
        "import rdrobust, warnings\nprint(warnings.formatwarning.__name__)\n",
        "def f(\n",
    ]
    for code in scripts:
        hot, frozen = run(warm, code), run(cold, code)
        for field in ("status", "exit_code", "stdout", "stderr", "fits", "missing_package"):
            assert getattr(hot, field) == getattr(frozen, field), (field, code, hot, frozen)


def _cells(records: Iterable[CellRecord]) -> dict[tuple[str, ...], dict[str, object]]:
    cells = {}
    for record in records:
        ex = record.execution
        assert ex is not None or record.status in ("no_code", "parse_error"), record
        key = (record.key.scenario_id, record.key.model, record.key.language)
        cells[key] = {
            "status": record.status,
            "scores": record.scores.model_dump() if record.scores is not None else None,
            "extraction": record.extraction.model_dump() if record.extraction else None,
            "execution": None
            if ex is None
            else ex.model_dump(exclude={"wall_seconds", "cpu_seconds", "peak_memory_mb"}),
        }
    return cells


def _warm_python(out_dir: Path) -> object:
    """What a run's metadata says of the warm interpreter ("off", or what it preloaded)."""
    with RunStore.open(out_dir) as store:
        return store.meta()["sandbox_policy"]["policy"]["warm_python"]


@pytest.mark.slow
def test_the_reference_panel_scores_the_same_warm_and_cold(
    reference_panel: PanelRun, tmp_path: Path
) -> None:
    # every reference agent's Python answer on one scenario per family: same cells, bit for bit.
    # The session's panel run made them warm (the default); the same run (suite, agents,
    # protocol, settings, response cache), in Python only, makes them again cold
    panel_warm = _warm_python(reference_panel.config.out_dir)
    assert panel_warm != "off", "the session's panel ran cold: is CAUSALVERIFY_WARM off?"
    config = dataclasses.replace(
        reference_panel.config, out_dir=tmp_path / "cold", languages=("python",), warm=False
    )
    run_benchmark(config)
    assert _warm_python(config.out_dir) == "off"
    with RunStore.open(config.out_dir) as store:
        cold_cells = _cells(store.iter_cells())
    warm_cells = _cells(only_language(reference_panel, "python"))
    assert len(warm_cells) == 4 * len(REFERENCE_PANEL)
    assert warm_cells.keys() == cold_cells.keys()
    for key, cell in warm_cells.items():
        assert cell == cold_cells[key], key
    statuses = {c["status"] for c in warm_cells.values()}
    assert {"correct", "wrong"} <= statuses, statuses


@pytest.mark.parametrize("warm_path", [True, False], ids=["warm", "cold"])
def test_a_cell_that_closes_its_descriptors_is_a_stored_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm_path: bool, smoke_suite_dir: Path
) -> None:
    # a cell that closes stdout, stderr and the fit log and sleeps on is that cell's timeout:
    # the run stores it and goes on to the next cell. It prints a marker first: the stored
    # output shows it closed everything before the deadline (a cell gets there in about 0.2 s,
    # cold and under heavy load, two at a time; the limit is 1.5 s)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite = smoke_suite_dir
    hostile = (
        "```python\nimport os, time\nprint('closing', flush=True)\n"
        "os.closerange(0, 1 << 16)\ntime.sleep(75)\n```\n"
    )

    def answer(_request: dict[str, Any]) -> Reply:
        return Reply(content=hostile)

    config = RunConfig(
        suite_dir=suite,
        out_dir=tmp_path / "run",
        models=("openai/closer",),
        languages=("python",),
        limit=2,
        workers=2,
        access=ModelAccess(cache_path=tmp_path / "cache.sqlite"),
        warm=warm_path,
        limits=Limits(wall_seconds=1.5, cpu_seconds=10, memory_mb=1024, max_processes=32),
    )
    with FakeOpenAIServer(responder=answer) as server:
        stages = dataclasses.replace(
            default_stages(config),
            make_provider=lambda spec: get_provider(spec, base_url=server.url),
        )
        summary = run_benchmark(config, stages=stages)
    assert summary.total == 2 and summary.computed == 2, summary
    with RunStore.open(config.out_dir) as store:
        records = list(store.iter_cells())
    assert len(records) == 2
    for record in records:
        assert record.execution is not None, record
        assert record.execution.status == "timeout", record.execution
        assert record.execution.stdout == "closing\n", record.execution
        assert record.execution.wall_seconds < config.limits.wall_seconds + 10, record.execution


RAISER = """\
import os, signal, socket, sys
import numpy as np
np.seterr(all="raise")
np.seterrcall(print)
np.set_printoptions(precision=2)
sys.setrecursionlimit(4321)
sys.unraisablehook = print
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
socket.setdefaulttimeout(7.0)
os.chdir("/")
"""
PROBE = """\
import json, os, signal, socket, sys
sys.path.insert(0, sys.argv[1])
from causalverify.sandbox import _warm_py
loaded = _warm_py._preload(["numpy", "raiser"])
import numpy as np
print(json.dumps({
    "loaded": loaded, "err": np.geterr(), "errcall": repr(np.geterrcall()),
    "precision": np.get_printoptions()["precision"], "limit": sys.getrecursionlimit(),
    "unraisable": sys.unraisablehook is sys.__unraisablehook__,
    "usr1": repr(signal.getsignal(signal.SIGUSR1)), "timeout": socket.getdefaulttimeout(),
    "cwd": os.getcwd(), "raiser": "raiser" in sys.modules,
}))
"""


def test_a_preloaded_module_that_changes_global_state_leaves_none_of_it(tmp_path: Path) -> None:
    # numpy's error and print state, hooks, limits, handlers and the working folder all come
    # back as they were: the warm cell sees what a cold one sees
    (tmp_path / "raiser.py").write_text(RAISER)
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    state = json.loads(out.stdout)
    assert state == {
        "loaded": ["numpy"],
        "err": {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"},
        "errcall": "None",
        "precision": 8,
        "limit": 1000,
        "unraisable": True,
        "usr1": "<Handlers.SIG_DFL: 0>",
        "timeout": None,
        "cwd": str(tmp_path),
        "raiser": False,
    }, out.stderr


PARITY_PROBES = {
    # the streams' encodings and error handlers: a surrogate-escaped byte prints, as cold
    "streams": (
        "import sys\nprint(sys.stdin.errors, sys.stdout.errors, sys.stderr.errors)\n"
        "print('caf\\udce9')\nprint('caf\\udce9', file=sys.stderr)\n"
    ),
    "argv": "import sys\nprint(sys.orig_argv[1:], sys.argv)\n",
    # the address-space limit leaves a warm cell what it leaves a cold one
    "numpy 1.5 GB": (
        "import numpy as np\na = np.empty(1536 * 2**20, dtype=np.uint8)\nprint(a.nbytes)\n"
    ),
    "statsmodels 0.9 GB": (
        "import numpy as np, pandas, statsmodels.formula.api\n"
        "a = np.empty(900 * 2**20, dtype=np.uint8)\nprint(a.nbytes)\n"
    ),
}


@pytest.mark.parametrize("probe", sorted(PARITY_PROBES))
def test_probes_print_the_same_warm_and_cold(
    warm: BwrapSandbox, cold: BwrapSandbox, probe: str
) -> None:
    limits = Limits(wall_seconds=60, cpu_seconds=30, memory_mb=2048, max_processes=32)
    code = PARITY_PROBES[probe]
    hot, frozen = run(warm, code, limits), run(cold, code, limits)
    assert frozen.status == "ok", frozen  # the probe itself works
    for field in ("status", "exit_code", "stdout", "stderr"):
        assert getattr(hot, field) == getattr(frozen, field), (field, hot, frozen)
