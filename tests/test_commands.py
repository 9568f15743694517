"""The read-only commands as a user runs them: ``analyze`` and ``report``."""

import json
from pathlib import Path

import pytest

from tests.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent


def test_analyze_prints_the_a6_predictions_worked_by_hand():
    """S1: N = 5,000, d = 2, k = 15, r = 1, θ = 10, ||o||² = d r² = 2.
    DPLloyd at ε = 1, t = 5: 2 t² k² (d+1)² (d + ||o||²)/(Nε)² = 2·25·225·9·4/25e6 = 0.0162.
    Ineq. 15: M_req = 12 (d+1)² k^(1+2/d) (d + ||o||²)/d = 12·9·225·4/2 = 48,600, and with
    M = Nε/θ at d = 2 the hybrid switches on at ε = 10·48,600/5,000 = 97.2."""
    spec = ROOT / "configs" / "fig1-s1.yaml"
    done = run_cli("analyze", str(spec), "--json")
    assert done.returncode == 0, done.stderr
    (s1,) = json.loads(done.stdout)
    assert (s1["N"], s1["d"], s1["k"]) == (5000, 2, 15)
    at_1 = next(p for p in s1["predictions"] if p["epsilon"] == 1.0)
    assert at_1["dplloyd_mse"] == pytest.approx(0.0162)
    assert at_1["switch_on_eps"] == pytest.approx(97.2)
    assert at_1["use_hybrid"] is False and at_1["eugkm_M"] == pytest.approx(500.0)
    text = run_cli("analyze", str(spec))
    assert text.returncode == 0 and "switches on at ε ≥ 97.2" in text.stdout


def test_analyze_of_a_missing_spec_is_one_line_exit_2(tmp_path):
    done = run_cli("analyze", str(tmp_path / "absent.yaml"))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_report_command_rewrites_the_committed_report(tmp_path):
    """``dpcluster report --results DIR`` on a copy of the reference tables gives the
    committed REPORT.md byte for byte."""
    import shutil

    results = tmp_path / "results"
    shutil.copytree(ROOT / "docs" / "results", results)
    (results / "REPORT.md").unlink()
    done = run_cli("report", "--results", str(results))
    assert done.returncode == 0, done.stderr
    assert (results / "REPORT.md").read_text() == (
        ROOT / "docs" / "results" / "REPORT.md"
    ).read_text()


def test_report_on_an_empty_folder_says_so_in_one_line_and_no_paper_text(tmp_path):
    done = run_cli("report", "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "REPORT.md").read_text()
    assert "No results under" in text
    # no paper spec ran: none of the papers' claims, baselines or Theorem 4
    assert "claims" not in text.replace("Privacy claims", "") and "Theorem 4" not in text


def test_report_on_a_missing_folder_is_one_line_and_writes_nothing(tmp_path):
    done = run_cli("report", "--results", str(tmp_path / "typo"))
    assert done.returncode == 2 and "typo: no such results folder" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "typo").exists()


def test_cli_reference_page_is_the_commands_own_help():
    """docs/cli.md is what scripts/make_cli_docs.py writes from today's commands: a new
    option or help text without regenerating the page fails here."""
    import importlib.util

    path = ROOT / "scripts" / "make_cli_docs.py"
    spec = importlib.util.spec_from_file_location("make_cli_docs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = module.render()
    assert "## dpcluster run\n" in page and "--backend [local|dask]" in page
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == page, (
        "docs/cli.md is stale: run python scripts/make_cli_docs.py"
    )


def test_every_exit_code_is_defined_once_and_the_readme_and_docs_show_that_table():
    from dpcluster import cli
    from dpcluster.audit import run as audit_run
    from dpcluster.exits import MEANING, Exit, markdown_table

    assert set(MEANING) == set(Exit)
    assert {audit_run.EXIT_CLAIM_VIOLATED, audit_run.EXIT_PROVABLE_VIOLATED} <= set(Exit)
    assert cli.EXIT_CODES == {int(code): text for code, text in MEANING.items()}
    for doc in ("README.md", "docs/cli.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert markdown_table() in text, f"{doc}: its exit-code table drifted from exits.py"


def test_the_docs_home_page_gives_the_readmes_two_commands():
    """docs/index.md opens with the README's front door: the same two commands."""
    import re

    def commands(text):
        return re.findall(r"^make (?:reproduce|test)\b.*$", text, flags=re.M)

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert commands(readme) and commands(home) == commands(readme)
