"""The committed reference results (docs/results/) are those of the current specs, and
every verdict of the committed REPORT.md is recomputed from the committed summaries."""

import json
from pathlib import Path

import pytest

from dpcluster import report, spec

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "results"
SPECS = sorted(
    [
        *(ROOT / "configs").glob("fig[0-9].yaml"),
        ROOT / "configs" / "numeric-checks.yaml",
        *(ROOT / "configs").glob("b-*.yaml"),
        ROOT / "configs" / "ldp-modern.yaml",
    ]
)


def test_reference_exists_with_its_provenance():
    meta = json.loads((REFERENCE / "meta.json").read_text())
    assert meta["commits"] and meta["wall_time_s"] > 0 and meta["machine"]["cores"]
    size = sum(
        p.stat().st_size for p in REFERENCE.rglob("*") if p.is_file() and p.suffix != ".html"
    )
    assert size < 5 * 2**20


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_reference_summaries_belong_to_the_current_specs(path):
    sp = spec.load(path)
    meta = json.loads((REFERENCE / sp.name / "meta.json").read_text())
    assert meta["spec_hash"] == sp.hash, f"{path} changed: run make reproduce-all reference"
    assert (REFERENCE / sp.name / "summary.csv").is_file()


def test_committed_report_is_recomputed_from_the_committed_summaries(tmp_path):
    fresh = report.write_report(REFERENCE, tmp_path / "REPORT.md").read_text()
    assert fresh == (REFERENCE / "REPORT.md").read_text()


def test_the_committed_page_is_small_and_leads_with_the_verdict():
    """docs/results/REPORT.html opens in any browser without the repository: under 1.5 MB
    with every figure inlined, the claims' count first."""
    page = REFERENCE / "REPORT.html"
    assert page.stat().st_size < 1.5 * 2**20
    text = page.read_text()
    first = text.index("claims of the papers hold")
    assert first < text.index("<h2>Runs</h2>") and text.count("data:image/png;base64") >= 12
