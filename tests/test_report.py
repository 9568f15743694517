"""The report's verdicts are computed from tables: each claim can hold, fail or lack data."""

import json

import pandas as pd

from dpcluster import report


def _summary(rows):
    base = {
        "dataset_label": "x",
        "standin": False,
        "N": 10,
        "d": 2,
        "k": 2,
        "n": 10,
        "std": 0.0,
        "ci95_low": 0.0,
        "ci95_high": 0.0,
        "min": 0.0,
        "max": 0.0,
    }
    out = []
    for r in rows:
        r = {**base, **r}
        r.setdefault("variant", r["algorithm"])
        r.setdefault("params", json.dumps(r.pop("p", {})))
        out.append(r)
    return pd.DataFrame(out)


def _claim(text_start):
    return next(c for c in report.CLAIMS if c.text.startswith(text_start))


def test_eugkm_small_eps_claim_holds_and_fails():
    claim = _claim("EUGkM beats DPLloyd")
    good = _summary(
        [
            {"dataset": "s1", "algorithm": a, "epsilon": e, "mean": m}
            for e in (0.05, 0.1)
            for a, m in (("eugkm", 0.03), ("dplloyd", 0.1))
        ]
    )
    assert bool(claim.check(good)[0]) is True
    bad = good.assign(mean=[0.2, 0.1, 0.2, 0.1])
    assert not claim.check(bad)[0]
    assert claim.check(good[good.algorithm == "dplloyd"])[0] is None  # no EUGkM: no data


def test_published_number_claim_uses_the_interval():
    claim = _claim("Adult-num, ε = 0.05: the hybrid falls back")
    row = {"dataset": "adult", "algorithm": "hybrid", "epsilon": 0.05, "p": {"force": False}}
    near = _summary([{**row, "mean": 0.368, "ci95_low": 0.358, "ci95_high": 0.377}])
    far = _summary([{**row, "mean": 0.5, "ci95_low": 0.49, "ci95_high": 0.51}])
    assert claim.check(near)[0] and not claim.check(far)[0]


def test_report_marks_specs_that_did_not_run(tmp_path):
    (tmp_path / "fig4").mkdir()
    _summary(
        [
            {"dataset": "s1", "algorithm": a, "epsilon": float("inf"), "step": 3, "mean": m}
            for a, m in (("lloyd_steps", 0.02), ("gene", 0.04))
        ]
    ).to_csv(tmp_path / "fig4" / "summary.csv", index=False)
    text = report.write_report(tmp_path).read_text()
    claim = "Lloyd improves faster than Gene in the first iterations (step 3)"
    assert f"| fig4 | {claim} | holds |" in text
    assert "EUGkM beats DPLloyd at ε ≤ 0.1 on S1" not in text  # collapsed into one line
    n = len(report.CLAIMS)
    assert f"Not run: {n - 1} of {n} claims" in text and "fig1" in text
    assert text.index("## Your runs") < text.index("## The papers' claims")


def _s1_run(root):
    """A fig1-s1 folder whose table holds EUGkM ahead of DPLloyd at ε = 0.05 and 0.1."""
    (root / "fig1-s1").mkdir()
    _summary(
        [
            {"dataset": "s1", "algorithm": a, "epsilon": e, "mean": m}
            for e in (0.05, 0.1)
            for a, m in (("eugkm", 0.03), ("dplloyd", 0.1))
        ]
    ).to_csv(root / "fig1-s1" / "summary.csv", index=False)


def test_a_claim_is_decided_by_the_reduced_run_that_holds_its_data(tmp_path):
    """After ``fig1-s1`` only, the S1 claim of Figure 1 is checked from fig1-s1's table."""
    _s1_run(tmp_path)
    text = report.write_report(tmp_path).read_text()
    assert "| fig1 | EUGkM beats DPLloyd at ε ≤ 0.1 on S1 | holds |" in text
    assert "(from fig1-s1/summary.csv)" in text
    assert "- **fig1-s1**: 4 summary rows" in text
    # fig1's other claims need rows fig1-s1 lacks (Adult-num, GkM): one line, no "—" rows
    assert "| — |" not in text
    undecided = sum(c.spec == "fig1" for c in report.CLAIMS) - 1
    assert f"Not decided: {undecided} more claims of fig1" in text


def test_a_folder_that_does_not_verify_is_flagged_and_decides_no_claim(tmp_path):
    """The same table as above, but its folder is named unverified (the CLI's check): the
    run is flagged in both pages and the claim gets an error verdict, not "holds"."""
    _s1_run(tmp_path)
    problem = "fig1-s1/summary.csv: differs from what the verified cells give"
    path = report.write_report(tmp_path, unverified={"fig1-s1": problem})
    text = path.read_text()
    assert f"**does not verify**: {problem}" in text
    assert "| fig1 | EUGkM beats DPLloyd at ε ≤ 0.1 on S1 | error | fig1-s1 does not verify" in text
    assert "Does not verify: " in path.with_suffix(".html").read_text()


def test_report_verifies_each_folder_with_cells_and_exits_5(tmp_path):
    import yaml

    from tests.cli import run_cli

    spec = {
        "name": "mine",
        "seed": 1,
        "datasets": [{"name": "synthetic", "params": {"N": 100, "k": 2, "d": 2}}],
        "epsilon": [1.0],
        "algorithms": [{"name": "dplloyd", "repeat": 2}],
        "init": {"sets": 2},
        "plot": {"kind": "none"},
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    assert run_cli("run", "s.yaml", "-q", cwd=tmp_path).returncode == 0
    assert run_cli("report", cwd=tmp_path).returncode == 0
    with (tmp_path / "results" / "mine" / "summary.csv").open("a") as f:
        f.write("edited\n")
    proc = run_cli("report", cwd=tmp_path)
    assert proc.returncode == 5 and "mine does not verify: " in proc.stderr
    assert "summary.csv: differs" in (tmp_path / "results" / "REPORT.md").read_text()


def test_fig2_theta_and_gkm_claims_hold_and_fail():
    theta = _claim("θ = 10 is good")
    gkm = _claim("GkM is the worst method at every")
    rows = []
    for ds in ("a", "b", "c"):
        for t, m in ((2.0, 0.5), (5.0, 0.3), (10.0, 0.1), (20.0, 0.2)):
            rows.append(
                {
                    "dataset": ds,
                    "algorithm": "eugkm",
                    "variant": f"eugkm(theta={t})",
                    "epsilon": 1.0,
                    "mean": m,
                    "p": {"theta": t},
                }
            )
        rows += [
            {"dataset": ds, "algorithm": a, "epsilon": 1.0, "mean": m}
            for a, m in (("gkm", 0.9), ("dplloyd", 0.4), ("pgkm", 0.6))
        ]
    good = _summary(rows)
    assert theta.check(good)[0] and gkm.check(good)[0]
    worse = good.assign(
        mean=[0.9 if v == "eugkm(theta=10.0)" else m for v, m in zip(good["variant"], good["mean"])]
    )
    assert not theta.check(worse)[0]  # θ = 10 now last of four everywhere
    assert not gkm.check(worse)[0]  # EUGkM (θ = 10) ties GkM at 0.9: not strictly worse
    assert gkm.check(good[good.algorithm != "gkm"])[0] is None
    # θ = 2 and 5 on one grid tie at 0.05 (one computation): θ = 10 ranks third, not second
    tied = good.assign(
        mean=[
            0.05 if v in ("eugkm(theta=2.0)", "eugkm(theta=5.0)") else m
            for v, m in zip(good["variant"], good["mean"])
        ]
    )
    verdict, detail = theta.check(tied)
    assert not verdict and "θ=2: 3, θ=5: 3" in detail


def test_a_check_that_raises_is_an_error_not_no_data(tmp_path, monkeypatch):
    from dpcluster import report

    (tmp_path / "fig1").mkdir()
    (tmp_path / "fig1" / "summary.csv").write_text("dataset,algorithm\ns1,lloyd\n")
    broken = report.Claim("fig1", "a claim whose check breaks", lambda s: s["no such column"])
    monkeypatch.setattr(report, "CLAIMS", [broken])
    ((_, (verdict, evidence)),) = report.evaluate(tmp_path)
    assert verdict == report.ERROR and "KeyError" in evidence
    assert "| fig1 | a claim whose check breaks | error |" in (
        report.write_report(tmp_path).read_text()
    )


def _fig5_table(fallback: dict, hybrid: dict, eugkm: dict):
    """A constructed Figure-5 summary: per (dataset, ε) the hybrid's fallback rate and mean,
    and EUGkM's mean."""
    import pandas as pd

    rows = []
    for (ds, eps), rate in fallback.items():
        rows.append(
            {
                "dataset": ds,
                "algorithm": "hybrid",
                "variant": "hybrid",
                "epsilon": eps,
                "mean": hybrid[(ds, eps)],
                "fell_back_mean": rate,
            }
        )
        rows.append(
            {
                "dataset": ds,
                "algorithm": "eugkm",
                "variant": "eugkm",
                "epsilon": eps,
                "mean": eugkm[(ds, eps)],
            }
        )
    return pd.DataFrame(rows)


def test_fig5_both_halves_hold_and_fail_on_constructed_tables():
    from dpcluster import report

    keys = [(ds, e) for ds in ("s1", "gowalla", "image") for e in (0.05, 1.0)]
    falls = {k: 1.0 if k[1] == 0.05 else 0.0 for k in keys}
    good = _fig5_table(falls, {k: 0.1 for k in keys}, {k: 0.2 for k in keys})
    assert report.paper_a.hybrid_falls_back_low_d(good)[0] is True
    assert report.paper_a.hybrid_after_switch(good)[0] is True
    bad = _fig5_table({k: 0.5 for k in keys}, {k: 0.3 for k in keys}, {k: 0.2 for k in keys})
    assert report.paper_a.hybrid_falls_back_low_d(bad)[0] is False
    assert report.paper_a.hybrid_after_switch(bad)[0] is False
    never = _fig5_table({k: 1.0 for k in keys}, {k: 0.3 for k in keys}, {k: 0.2 for k in keys})
    verdict, evidence = report.paper_a.hybrid_after_switch(never)
    assert verdict is None and "not testable on this data" in evidence


def test_the_html_page_is_one_self_contained_file_of_every_run(tmp_path):
    """REPORT.html beside REPORT.md: each run's figure inlined, its summary with the ε
    columns, the claims and the audit, and no file or address it would need to fetch."""
    import re
    import shutil
    from pathlib import Path

    reference = Path(__file__).resolve().parent.parent / "docs" / "results"
    for name in ("fig4", "b-table3", "audit"):
        shutil.copytree(reference / name, tmp_path / name)
    report.write_report(tmp_path)
    page = (tmp_path / "REPORT.html").read_text()
    assert page.count('src="data:image/png;base64,') == 1  # fig4 drew a figure
    assert not re.search(r'(src|href)="(?!data:|#)', page)  # nothing outside the file
    for text in ("fig4", "b-table3", "epsilon_provable_max", "Privacy audit", "holds"):
        assert text in page
    assert "violation" in page  # the audit's verdicts, Theorem 4's included
    assert str(tmp_path) not in page  # no path of the machine that wrote it
    # read as a reader would: no "nan" or "inf" in a cell, text columns left-aligned
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page)
    assert not {"nan", "inf", "-inf"} & set(cells)
    assert "∞" in cells and "–" in cells  # Lloyd's ε; the audit's not-private rows
    assert '<table class="text">' in page


def test_report_embeds_only_drawings_its_runs_made(tmp_path):
    """A received folder may point figure.png or table.md elsewhere: a link, a directory or a
    file that is not of its kind is left out of both pages and its folder flagged (exit 5),
    and a secret it points to never enters the page."""
    import base64

    from dpcluster.report import drawn
    from tests.cli import run_cli

    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN")
    cases = {
        "linked": lambda f: (f / "figure.png").symlink_to(secret),
        "text": lambda f: (f / "figure.png").write_text("TOP-SECRET-TOKEN"),
        "folder": lambda f: (f / "figure.png").mkdir(),
        "table-link": lambda f: (f / "table.md").symlink_to(secret),
        "binary-table": lambda f: (f / "table.md").write_bytes(b"\xff\xfe\x00secret"),
    }
    results = tmp_path / "results"
    for name, plant in cases.items():
        folder = results / name
        folder.mkdir(parents=True)
        _summary([{"dataset": "s1", "algorithm": "lloyd", "epsilon": 1.0, "mean": 0.1}]).to_csv(
            folder / "summary.csv", index=False
        )
        plant(folder)
    good = results / "good"
    good.mkdir()
    _summary([{"dataset": "s1", "algorithm": "lloyd", "epsilon": 1.0, "mean": 0.1}]).to_csv(
        good / "summary.csv", index=False
    )
    (good / "figure.png").write_bytes(drawn.PNG_SIGNATURE + b"rest")
    assert set(drawn.problems(results)) == set(cases)
    proc = run_cli("report", cwd=tmp_path)
    assert proc.returncode == 5
    assert all(f"error: {name} does not verify: " in proc.stderr for name in cases)
    assert "Traceback" not in proc.stderr
    page = (results / "REPORT.html").read_text()
    text = (results / "REPORT.md").read_text()
    token = base64.b64encode(b"TOP-SECRET-TOKEN").decode()[:12]
    assert "TOP-SECRET" not in page + text and token not in page
    assert page.count("data:image/png;base64,") == 1  # the good run's figure only


HOSTILE = (
    '<script>alert(1)</script> <img src=x onerror="alert(2)"> '
    "[click](javascript:alert(3)) ![i](javascript:alert(4)) <javascript:alert(5)>"
)


def test_text_from_user_input_is_inert_in_both_pages(tmp_path):
    """A csv dataset's label, a plugin's algorithm name, a table's cells and an audit row
    reach REPORT.md and REPORT.html as text: no tag, handler or link survives."""
    import re

    results = tmp_path / "results"
    folder = results / "mine"
    folder.mkdir(parents=True)
    rows = [
        {
            "dataset": "csv",
            "dataset_label": HOSTILE,
            "algorithm": "lloyd",
            "variant": HOSTILE,
            "epsilon": 1.0,
            "mean": 0.1,
            "metric": HOSTILE,
        }
    ]
    _summary(rows).to_csv(folder / "summary.csv", index=False)
    table = pd.DataFrame([{"dataset": HOSTILE, "method": HOSTILE, "epsilon": "1"}])
    table.to_csv(folder / "table.csv", index=False)
    (folder / "table.md").write_text(f"| raw |\n|---|\n| {HOSTILE} |\n")
    (results / "audit").mkdir()
    audit = {
        "algorithm": HOSTILE,
        "epsilon": 1.0,
        "epsilon_claimed": 1.0,
        "epsilon_provable": 1.0,
        "epsilon_lb_blackbox": 0.1,
        "epsilon_lb_whitebox": 0.2,
        "verdict": HOSTILE,
    }
    pd.DataFrame([audit]).to_csv(results / "audit" / "audit.csv", index=False)
    report.write_report(results)
    for page in ("REPORT.md", "REPORT.html"):
        text = (results / page).read_text()
        assert "&lt;script&gt;" in text  # the label is there, as text
        assert not re.search(r"<(script|img|javascript)", text), page
        assert not re.search(r"<[^>]*onerror", text), page  # no handler inside a real tag
        if page == "REPORT.md":  # Markdown would make a link of it; HTML shows it as text
            assert not re.search(r"(?<!\\)\]\(javascript:", text), page
        assert "| raw |" not in text  # the table is rebuilt from its csv, not quoted


def test_a_summary_that_is_a_folder_is_exit_5(tmp_path):
    """docs/cli.md: a results folder that does not verify is exit 5, whatever is wrong."""
    from tests.cli import run_cli

    (tmp_path / "results" / "x" / "summary.csv").mkdir(parents=True)
    proc = run_cli("report", cwd=tmp_path)
    assert proc.returncode == 5, proc.stderr
    assert "summary.csv: not a readable table" in proc.stderr and "Traceback" not in proc.stderr


def test_a_users_estimator_run_named_like_a_figure_is_not_judged_by_the_papers(tmp_path):
    """The papers' claims read the papers' runs: a folder named ``fig1`` that holds an
    estimator-pipeline run (its meta.json says so, or its summary has cost ratios) decides
    no claim."""
    results = tmp_path / "results"
    folder = results / "fig1"
    folder.mkdir(parents=True)
    rows = [{"dataset": "csv", "algorithm": "lloyd", "epsilon": 1.0, "mean": 0.1}]
    frame = _summary(rows).assign(metric="cost", cost_mean=0.1, cost_ratio=1.0)
    frame.to_csv(folder / "summary.csv", index=False)
    (folder / "meta.json").write_text(json.dumps({"spec": {"pipeline": "estimator"}}))
    verdicts = report.evaluate(results)
    assert all(v[0] is None for _, v in verdicts)
    report.write_report(results)
    assert "claims of the papers hold" not in (results / "REPORT.md").read_text()


def test_the_html_page_has_the_privacy_claims_and_short_dataset_cells(tmp_path):
    import shutil
    from pathlib import Path

    reference = Path(__file__).resolve().parent.parent / "docs" / "results"
    for name in ("fig4", "b-table3"):
        shutil.copytree(reference / name, tmp_path / name)
    report.write_report(tmp_path)
    page = (tmp_path / "REPORT.html").read_text()
    assert '<h2 id="privacy">Privacy: claimed and provable ε</h2>' in page
    assert "overflow-x: auto" in page  # a wide table scrolls inside the page


def test_pgkm_beats_dplloyd_only_where_the_intervals_are_apart():
    """Fig. 1's claim: a lower PGkM mean inside DPLloyd's noise is a tie, not a win; a win
    at S1 below ε = 0.15 is allowed; a win elsewhere breaks the claim."""
    import pandas as pd

    from dpcluster.report.paper_a import pgkm_only_s1_small

    def summary(rows):
        out = []
        for ds, eps, alg, mean, half in rows:
            out.append(
                {"dataset": ds, "epsilon": eps, "algorithm": alg, "variant": alg,
                 "params": "{}", "mean": mean, "ci95_low": mean - half,
                 "ci95_high": mean + half}
            )  # fmt: skip
        return pd.DataFrame(out)

    tie = [("s1", 0.15, "pgkm", 0.0899, 0.005), ("s1", 0.15, "dplloyd", 0.0921, 0.0006)]
    small = [("s1", 0.1, "pgkm", 0.092, 0.004), ("s1", 0.1, "dplloyd", 0.108, 0.001)]
    ok, detail = pgkm_only_s1_small(summary(tie + small))
    assert ok and "s1 ε=0.1" in detail and "within the intervals at: s1 ε=0.15" in detail
    far = [("s1", 0.15, "pgkm", 0.080, 0.002), ("s1", 0.15, "dplloyd", 0.0921, 0.0006)]
    assert pgkm_only_s1_small(summary(far + small))[0] is False
