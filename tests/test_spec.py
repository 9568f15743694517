"""One test per kind of spec mistake; each message names file, key and value."""

from pathlib import Path

import pytest
import yaml

from dpcluster import spec
from dpcluster.errors import SpecError

ROOT = Path(__file__).resolve().parent.parent
GOOD = {
    "name": "t",
    "seed": 1,
    "datasets": [{"name": "s1"}],
    "epsilon": [0.5, 1.0],
    "algorithms": [{"name": "lloyd"}, {"name": "dplloyd", "repeat": 2}],
}


def _err(mutate) -> SpecError:
    raw = yaml.safe_load(yaml.safe_dump(GOOD))
    mutate(raw)
    with pytest.raises(SpecError) as info:
        spec.parse(raw, "my.yaml")
    return info.value


def test_good_spec_parses():
    sp = spec.parse(GOOD, "my.yaml")
    assert sp.epsilon == (0.5, 1.0) and sp.init.sets == 30 and sp.init.method == "uniform"
    assert sp.algorithms[1].kwargs == {"iterations": 5, "min_count": 0.0}


def test_unknown_top_level_key_suggests():
    e = _err(lambda r: r.update(epsilonn=[1]))
    assert str(e).startswith("my.yaml: key 'epsilonn'") and "Did you mean 'epsilon'" in str(e)


def test_unknown_algorithm_param_suggests():
    e = _err(lambda r: r["algorithms"][1].update(params={"iteratons": 5}))
    assert e.key == "algorithms[1].params.iteratons" and "'iterations'" in str(e)


def test_a_name_in_the_papers_capitals_suggests_the_registry_name():
    e = _err(lambda r: r["algorithms"][1].update(name="DPLloyd"))
    assert "Did you mean 'dplloyd'?" in str(e)


def test_unknown_dataset():
    e = _err(lambda r: r["datasets"][0].update(name="s11"))
    assert e.key == "datasets[0].name" and e.value == "s11" and "'s1'" in str(e)


def test_unknown_algorithm():
    e = _err(lambda r: r["algorithms"][0].update(name="dplloid"))
    assert e.key == "algorithms[0].name" and "'dplloyd'" in str(e)


def test_wrong_type():
    e = _err(lambda r: r["algorithms"][1].update(params={"iterations": "five"}))
    assert e.key == "algorithms[1].params.iterations" and "integer" in str(e)


def test_bad_epsilon():
    e = _err(lambda r: r.update(epsilon=[1.0, -0.5]))
    assert e.key == "epsilon[1]" and e.value == -0.5


def test_missing_epsilon_for_private_algorithm():
    e = _err(lambda r: r.pop("epsilon"))
    assert e.key == "epsilon"


def test_missing_required_key():
    e = _err(lambda r: r.pop("seed"))
    assert e.key == "seed" and "required" in str(e)


def test_bad_choice():
    e = _err(lambda r: r["algorithms"].append({"name": "eugkm", "params": {"rounding": "flor"}}))
    assert "'floor'" in str(e)


def test_value_below_minimum():
    e = _err(lambda r: r["algorithms"][1].update(repeat=0))
    assert e.key == "algorithms[1].repeat" and ">= 1" in str(e)


def test_unknown_synthetic_param():
    e = _err(lambda r: r["datasets"].append({"name": "synthetic", "params": {"dim": 3}}))
    assert e.key == "datasets[1].params.dim" and "'d'" in str(e)


def test_bad_init_method():
    e = _err(lambda r: r.update(init={"method": "sphere"}))
    assert e.key == "init.method" and "sphere_packing" in str(e)


def test_bad_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(SpecError) as info:
        spec.load(bad)
    assert str(bad) in str(info.value) and "YAML" in str(info.value)
    with pytest.raises(SpecError, match="not found"):
        spec.load(tmp_path / "nope.yaml")


def test_sweeps_expand():
    raw = {
        **GOOD,
        "datasets": [{"name": "synthetic", "params": {"k": [2, 3], "d": [2, 4]}}],
        "algorithms": [{"name": "eugkm", "params": {"theta": [5, 10]}}],
    }
    sp = spec.parse(raw)
    assert len(sp.datasets) == 4 and len(sp.algorithms) == 2
    assert sp.algorithms[0].variant == "eugkm(theta=5.0)"


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_validates(path):
    """Each shipped spec parses, is named after its file, expands to cells whose algorithms
    all resolve, and asks for metrics its algorithms report."""
    from dpcluster.experiments import lookup
    from dpcluster.harness import expand

    sp = spec.load(path)
    assert sp.name == path.stem
    cells = expand(sp)
    assert cells and all(c.n_runs >= 1 for c in cells)
    for alg in sp.algorithms:
        assert sp.metrics[0] in lookup(alg.name, alg.source).metrics


FULL_SPECS = sorted(
    p for p in (ROOT / "configs").glob("*.yaml") if (ROOT / "configs" / f"smoke-{p.name}").exists()
)


@pytest.mark.parametrize("path", FULL_SPECS, ids=lambda p: p.name)
def test_smoke_twin_runs_the_same_algorithms_and_plot(path):
    """A figure's CI twin reduces sizes only: same algorithms, metric and plot kind."""
    full, twin = spec.load(path), spec.load(path.parent / f"smoke-{path.name}")
    assert {a.name for a in twin.algorithms} <= {a.name for a in full.algorithms}
    assert twin.metrics[0] == full.metrics[0] and twin.plot.kind == full.plot.kind


def test_bad_gkm_block_rule():
    def mutate(raw):
        raw["algorithms"] = [{"name": "gkm", "params": {"block": "N0.6"}}]

    err = _err(mutate)
    assert "my.yaml" in str(err) and "block" in str(err) and "N0.6" in str(err)


def test_tiger_needs_a_path_and_an_existing_file(tmp_path):
    def no_path(raw):
        raw["datasets"] = [{"name": "tiger"}]

    err = _err(no_path)
    assert "datasets[0].params.path" in str(err) and "required" in str(err)

    def missing(raw):
        raw["datasets"] = [{"name": "tiger", "params": {"path": str(tmp_path / "nope.csv")}}]

    assert "file not found" in str(_err(missing))


def test_tiger_user_file_loads_normalised(tmp_path):
    import gzip

    from dpcluster import data
    from dpcluster.errors import DataError

    path = tmp_path / "tiger.csv.gz"
    path.write_bytes(gzip.compress(b"lon,lat\n-120.5,47.1\n-106.2,35.0\n-119.0,46.0\n"))
    raw = {**GOOD, "datasets": [{"name": "tiger", "params": {"path": str(path)}}]}
    sp = spec.parse(raw, "my.yaml")
    ds = data.load("tiger", **sp.datasets[0].kwargs)
    assert ds.X.shape == (3, 2) and ds.k == 2 and ds.X.min() == -1.0 and ds.X.max() == 1.0
    with pytest.raises(DataError, match="checksum mismatch"):
        data.load("tiger", path=str(path), sha256="00" * 32)


def test_metric_an_algorithm_does_not_report():
    err = _err(lambda raw: raw.update(metrics=["ari"]))
    assert "metrics[0]" in str(err) and "'lloyd'" in str(err) and "nicv" in str(err)


# --- specs that would be silently wrong are refused ---------------------------------------


def _write(tmp_path, text, name="s.yaml", raw_bytes=None):
    p = tmp_path / name
    if raw_bytes is not None:
        p.write_bytes(raw_bytes)
    else:
        p.write_text(text)
    return p


def test_duplicate_yaml_key_is_an_error(tmp_path):
    p = _write(
        tmp_path, "name: a\nseed: 1\nseed: 2\ndatasets: [{name: s1}]\nalgorithms: [{name: lloyd}]\n"
    )
    with pytest.raises(SpecError) as info:
        spec.load(p)
    assert "'seed'" in str(info.value) and "lines 2 and 3" in str(info.value)


def test_a_number_in_exponent_form_is_a_number(tmp_path):
    """PyYAML reads 1e-3 (no dot) as a string; a spec and --set read it as YAML 1.2 does."""
    p = _write(
        tmp_path,
        "name: a\nseed: 1\nepsilon: [1e-3, 2E+1]\ndatasets: [{name: s1}]\n"
        "algorithms: [{name: lloyd}, {name: eugkm, params: {theta: 1e1}}]\n",
    )
    sp = spec.load(p)
    assert sp.epsilon == (0.001, 20.0) and sp.algorithms[1].kwargs["theta"] == 10.0
    assert spec.load(p, spec.parse_overrides(["epsilon=[5e-1]"])).epsilon == (0.5,)
    assert yaml.safe_load("a: 1e-3") == {"a": "1e-3"}  # PyYAML itself is left as it is


def test_duplicate_entries_are_errors():
    e = _err(lambda r: r["algorithms"].append({"name": "dplloyd", "repeat": 2}))
    assert e.key == "algorithms[2]" and "twice" in str(e)
    e = _err(lambda r: r["datasets"].append({"name": "s1"}))
    assert e.key == "datasets[1]"
    e = _err(lambda r: r["algorithms"][1].update(params={"iterations": [5, 5]}))
    assert "repeats algorithm" in str(e)


def test_empty_epsilon_grid_is_an_error():
    e = _err(lambda r: r.update(epsilon=[]))
    assert e.key == "epsilon" and "empty" in str(e)


def test_non_utf8_spec_is_one_line(tmp_path):
    p = _write(tmp_path, "", raw_bytes=b"name: \xff\xfe\n")
    with pytest.raises(SpecError) as info:
        spec.load(p)
    assert "UTF-8" in str(info.value) and "\n" not in str(info.value)


# --- --set overrides ---------------------------------------------------------------------


def test_overrides_follow_paths_names_and_indices(tmp_path):
    p = tmp_path / "o.yaml"
    p.write_text(
        yaml.safe_dump({**GOOD, "datasets": [{"name": "synthetic", "params": {"N": 300}}]})
    )
    sets = spec.parse_overrides(
        [
            "epsilon=[0.25, 2]",
            "seed=3",
            "algorithms.dplloyd.repeat=7",
            "datasets.0.params.N=500",
            "bounds=public",
        ]
    )
    sp = spec.load(p, sets)
    assert sp.epsilon == (0.25, 2.0) and sp.seed == 3
    assert [a.repeat for a in sp.algorithms if a.name == "dplloyd"] == [7]
    assert sp.datasets[0].kwargs["N"] == 500 and sp.datasets[0].kwargs["bounds"] == "public"
    plain = spec.load(p)
    assert sp.hash != plain.hash and sp.default_out != plain.default_out
    assert str(sp.default_out).startswith("results/t--set-")


@pytest.mark.parametrize(
    "item,message",
    [
        (
            "algorithms.dplloid.repeat=3",
            "P: key '--set algorithms.dplloid.repeat': no entry named 'dplloid' (got '3'). "
            "Did you mean 'dplloyd'?",
        ),
        (
            "datasets.1.params.N=3",
            "P: key '--set datasets.1.params.N': index 1 is outside the list of 1 entries "
            "(got '3')",
        ),
        (
            "datasets.-2.params.N=3",
            "P: key '--set datasets.-2.params.N': index -2 is outside the list of 1 entries "
            "(got '3')",
        ),
        (
            "algorithms.dplloyd=3",
            "P: key '--set algorithms.dplloyd': names an entry; set one of its keys, e.g. "
            ".repeat or .params.<name> (got '3')",
        ),
        ("epsilon=[0.5", "P: key '--set epsilon': is not a YAML value (got '[0.5')"),
        ("seed", "--set: key 'seed': must look like key=value (got 'seed')"),
        ("=3", "--set: key '=3': must look like key=value (got '=3')"),
        (".=3", "P: key '--set .': needs a key: --set key=value (got '3')"),
        ("seed.x=3", "P: key '--set seed.x': seed is not a mapping or a list (got '3')"),
        (
            "datasets.0.name.x=1",
            "P: key '--set datasets.0.name.x': datasets.0.name is not a mapping or a list "
            "(got '1')",
        ),
        (
            "algorithms.1.repeat=-1",
            "P: key 'algorithms[1].repeat': must be >= 1 (got -1)",
        ),
        (
            "epsilon.x=2",
            "P: key '--set epsilon.x': 'x' is not a number: this list holds 2 plain "
            "value(s), indexed from 0 (got '2')",
        ),
    ],
)
def test_bad_overrides_name_file_key_and_value(tmp_path, item, message):
    """Each --set error, word for word (P is the spec's path)."""
    p = tmp_path / "o.yaml"
    p.write_text(yaml.safe_dump(GOOD))
    with pytest.raises(SpecError) as info:
        spec.load(p, spec.parse_overrides([item]))
    expected = f"{p}{message[1:]}" if message.startswith("P:") else message
    assert str(info.value) == expected


def test_overrides_reach_the_last_entry_by_a_negative_index_and_leave_the_input_alone(tmp_path):
    raw = yaml.safe_load(yaml.safe_dump(GOOD))
    out = spec.apply_overrides(raw, [("algorithms.-1.repeat", "9"), ("new.key", "1")], "f.yaml")
    assert out["algorithms"][-1]["repeat"] == 9 and out["new"] == {"key": 1}
    assert raw == GOOD  # a deep copy: the loaded document is not changed
    assert spec.apply_overrides(None, [("seed", "4")], "f.yaml") == {"seed": 4}


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "P: key '(file)': spec file not found (got 'P')"),
        (b"name: t\n\xff\n", "P: key '(file)': is not UTF-8 text (got 'byte 8')"),
        (
            b"name: t\nseed: 1\nseed: 2\n",
            "P: key 'seed': is given twice (lines 2 and 3); YAML would silently keep the last "
            "(got 'seed')",
        ),
        (
            b"name: t\n1: a\n1: b\n",
            "P: key '1': is given twice (lines 2 and 3); YAML would silently keep the last (got 1)",
        ),
        (
            b"name: t\nepsilon: [1, 2\n",
            "P: key 'line 3, column 1': is not valid YAML (got \"expected ',' or ']', but got "
            "'<stream end>'\")",
        ),
    ],
)
def test_file_level_errors_word_for_word(tmp_path, content, message):
    """P is the spec's path; it is the file, and for a missing file the value too."""
    p = tmp_path / "s.yaml"
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(SpecError) as info:
        spec.load(p)
    assert str(info.value) == message.replace("P", str(p))


def test_an_unreadable_spec_names_the_reason(tmp_path, monkeypatch):
    p = tmp_path / "s.yaml"
    p.write_text("name: t\n")

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(SpecError) as info:
        spec.load(p)
    assert str(info.value) == f"{p}: key '(file)': cannot be read (Permission denied) (got '{p}')"


def test_an_override_value_may_contain_equals_signs():
    assert spec.parse_overrides(["name=x=y", "a.b = 1"]) == (("name", "x=y"), ("a.b", " 1"))


def test_a_plot_section_parses_to_its_options():
    """Every plot option reaches the PlotSpec: a single x becomes a one-item tuple, the
    booleans and texts are the spec's, and an absent section takes PlotSpec's defaults."""
    from dpcluster.spec.model import PlotSpec

    raw = {
        "name": "p",
        "seed": 1,
        "epsilon": [1.0],
        "datasets": [{"name": "synthetic", "params": {"N": 100, "k": 2, "d": [2, 3]}}],
        "algorithms": [{"name": "dplloyd", "repeat": 2}],
    }
    lines = {
        "kind": "lines",
        "x": "d",
        "log_y": False,
        "log_x": True,
        "title": "A $\\epsilon$ sweep",
        "xlabel": "dimensions",
    }
    plot = spec.parse({**raw, "plot": lines}).plot
    assert plot == PlotSpec(
        kind="lines",
        x=("d",),
        log_y=False,
        log_x=True,
        title="A $\\epsilon$ sweep",
        xlabel="dimensions",
    )
    assert spec.parse({**raw, "plot": {"kind": "gap_vs_param", "x": ["k", "d"]}}).plot.x == (
        "k",
        "d",
    )
    assert spec.parse(raw).plot == PlotSpec()
    assert spec.parse({**raw, "plot": None}).plot == PlotSpec()


PLUGIN_SOURCE = """\
from dpcluster.plugins import algorithm
from dpcluster.privacy import LaplaceMechanism, Ledger


@algorithm(private=True, repeat=2)
def f(ctx):
    ledger = Ledger()
    ledger.record(LaplaceMechanism(ctx.epsilon, 1.0), "a")
    return [{"init": 0, "rep": 0, "nicv": 0.5}], ledger
"""


def test_a_plugin_entry_is_read_from_the_specs_folder_with_its_code(tmp_path):
    """A "module:attribute" entry is imported from the spec's own folder and carries its
    code's identity, which an edit changes; a built-in carries neither. A name that is
    no entry is refused by key and value, with a hint for each kind of name."""
    (tmp_path / "plug.py").write_text(PLUGIN_SOURCE)
    raw = {
        "name": "p",
        "seed": 1,
        "epsilon": [1.0],
        "datasets": [{"name": "synthetic", "params": {"N": 100, "k": 2, "d": 2}}],
        "algorithms": [{"name": "plug:f", "params": {}}, {"name": "lloyd"}],
        "plot": {"kind": "none"},
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(raw))
    plugin, lloyd = spec.load(path).algorithms
    assert plugin.source == str(tmp_path.resolve()) and plugin.repeat == 2
    assert [name for name, _ in plugin.code] == ["plug.py"] and len(plugin.code[0][1]) == 64
    assert (lloyd.source, lloyd.code) == ("", ())
    (tmp_path / "plug.py").write_text(PLUGIN_SOURCE + "# an edit\n")
    assert spec.load(path).algorithms[0].code != plugin.code
    for name, words in [
        ("plug:g", ["key 'algorithms[0].name'", "(got 'plug:g')", "importable from the spec's"]),
        ("dplloy", ["key 'algorithms[0].name'", "unknown algorithm", "Did you mean 'dplloyd'"]),
    ]:
        raw["algorithms"][0]["name"] = name
        path.write_text(yaml.safe_dump(raw))
        with pytest.raises(SpecError) as info:
            spec.load(path)
        for w in words:
            assert w in str(info.value), (name, str(info.value))


def test_algorithms_must_be_a_list_of_entries():
    raw = {"name": "p", "seed": 1, "datasets": [{"name": "s1"}], "epsilon": [1.0]}
    for bad in (None, [], "dplloyd", {"name": "dplloyd"}):
        with pytest.raises(SpecError, match=r"key 'algorithms': must be a non-empty list"):
            spec.parse({**raw, "algorithms": bad})
    with pytest.raises(SpecError, match=r"key 'algorithms\[0\]': must be a mapping"):
        spec.parse({**raw, "algorithms": ["dplloyd"]})
    with pytest.raises(SpecError, match=r"key 'algorithms\[0\].colour': unknown key"):
        spec.parse({**raw, "algorithms": [{"name": "dplloyd", "colour": 1}]})
    with pytest.raises(SpecError, match=r"key 'algorithms\[0\].params': must be a mapping"):
        spec.parse({**raw, "algorithms": [{"name": "dplloyd", "params": [1]}]})
