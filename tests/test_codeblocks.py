"""Code-block extraction (L2a) and the Python parse check."""

from __future__ import annotations

import pytest

from causalverify.sandbox import check_parses, extract_code
from causalverify.sandbox.codeblocks import find_code_blocks, guess_language

R_CODE = 'library(AER)\nd <- read.csv("data/s001.csv")\nsummary(ivreg(y ~ d | z, data = d))\n'
PY_CODE = 'import pandas as pd\ndf = pd.read_csv("data/s001.csv")\nprint(df.shape)\n'


def answer(*blocks: tuple[str, str]) -> str:
    parts = ["## Design\nWe use IV.\n"]
    for label, code in blocks:
        parts.append(f"```{label}\n{code}```\n")
    parts.append("## Result\nDone.\n")
    return "\n".join(parts)


@pytest.mark.parametrize("label", ["r", "R", "{r}", "{r setup, echo=FALSE}", "Rscript"])
def test_r_labels(label: str) -> None:
    block = extract_code(answer((label, R_CODE)), "r")
    assert block is not None
    assert block.code == R_CODE
    assert block.language == "r"
    assert block.label == label


@pytest.mark.parametrize("label", ["python", "py", "python3", "Python"])
def test_python_labels(label: str) -> None:
    block = extract_code(answer((label, PY_CODE)), "python")
    assert block is not None and block.code == PY_CODE and block.language == "python"


def test_unlabelled_blocks_are_recognised_by_content() -> None:
    text = answer(("", "echo hello\n"), ("", PY_CODE), ("", R_CODE))
    blocks = find_code_blocks(text)
    assert [(b.language, b.index) for b in blocks] == [("python", 1), ("r", 2)]
    r_block = extract_code(text, "r")
    assert r_block is not None and r_block.index == 2


def test_default_policy_takes_first_block_of_requested_language() -> None:
    text = answer(("r", R_CODE), ("python", PY_CODE), ("python", "print(2)\n"))
    block = extract_code(text, "python")
    assert block is not None and block.code == PY_CODE and block.index == 1


def test_paper_policy_takes_first_r_block_and_never_hands_r_to_python() -> None:
    text = answer(("python", PY_CODE), ("r", R_CODE), ("r", "print(2)\n"))
    block = extract_code(text, "r", policy="paper")
    assert block is not None and block.code == R_CODE and block.index == 1
    # a Python cell under the paper protocol runs the first Python block, not an R block
    python_block = extract_code(text, "python", policy="paper")
    assert python_block is not None and python_block.code == PY_CODE
    only_r = answer(("r", R_CODE))
    assert extract_code(only_r, "python", policy="paper") is None


def test_no_code_and_other_languages() -> None:
    assert extract_code("I cannot help with that.", "r") is None
    assert extract_code(answer(("bash", "ls -la\n"), ("json", '{"a": 1}\n')), "python") is None
    assert extract_code(answer(("r", "   \n")), "r") is None


def test_tilde_fences_longer_fences_and_unclosed_block() -> None:
    nested = "````r\nx <- 1\n```\nnot a fence end\n````\n"
    block = extract_code(nested, "r")
    assert block is not None and "not a fence end" in block.code
    tilde = extract_code("~~~python\nprint(1)\n~~~\n", "python")
    assert tilde is not None and tilde.code == "print(1)\n"
    unclosed = extract_code("text\n```python\nprint(3)\n", "python")
    assert unclosed is not None and unclosed.code == "print(3)\n"


def test_indented_fence_is_dedented() -> None:
    text = "1. Run this:\n   ```r\n   x <- 1\n   print(x)\n   ```\n"
    block = extract_code(text, "r")
    assert block is not None and block.code == "x <- 1\nprint(x)\n"


def test_guess_language_is_undecided_on_weak_evidence() -> None:
    assert guess_language("x = 1\n") is None
    assert guess_language("from scipy import stats\nprint(stats.norm.cdf(0))\n") == "python"
    assert guess_language("x <- c(1, 2)\nmean(x)\n") == "r"


def test_unknown_policy_rejected() -> None:
    with pytest.raises(ValueError, match="policy"):
        extract_code("", "r", policy="latest")  # type: ignore[arg-type]


def test_python_parse_check_runs_in_process() -> None:
    class NoSandbox:
        def run(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("Python parsing must not use the sandbox")

    ok = check_parses(PY_CODE, "python", NoSandbox())  # type: ignore[arg-type]
    assert ok.ok and ok.error is None
    bad = check_parses("def f(:\n    pass\n", "python", NoSandbox())  # type: ignore[arg-type]
    assert not bad.ok and bad.error is not None and bad.error.startswith("SyntaxError")
    # parsing is not executing: code that would raise at run time still parses
    assert check_parses("raise SystemExit(3)\n", "python", NoSandbox()).ok  # type: ignore[arg-type]
