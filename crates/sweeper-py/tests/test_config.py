"""load_config / validate: the checks and messages of `sweeper validate`, ConfigError's
attributes, and the round trips of Config and Space."""

import json
import pathlib

import pytest

import sweeper
from conftest import EXAMPLES

BAD = {
    # (config text, rule, path, (line, column) or None)
    "sla_missing": ("goal: {target: goodput}\n", "sla_missing", "goal.sla", None),
    "unknown_key": ("goal:\n  target: pareto\n  bogus: 1\n", "unknown_key", "goal.bogus", (3, 3)),
    "kv_range_order": (
        "goal: {target: pareto}\nworkload: {isl: 1, osl: 1, num_request_ratio: 1, kv_load_ratio: [0.9, 0.1]}\n",
        "kv_range_order",
        "workload.kv_load_ratio",
        None,
    ),
    "syntax": ("goal: [unclosed\n", "syntax", None, (2, 1)),
    "unknown_target": ("goal: {target: speed}\n", "unknown_target", "goal.target", None),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_config_errors_carry_path_rule_line_column(name):
    text, rule, path, location = BAD[name]
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.load_config(text)
    e = info.value
    assert isinstance(e, ValueError)
    assert (e.rule, e.path) == (rule, path)
    if location is not None:
        assert (e.line, e.column) == location
    assert str(e).startswith("invalid config: ")
    assert e.errors[0]["rule"] == rule and e.errors[0]["message"] in str(e)


@pytest.mark.parametrize("name", sorted(BAD))
def test_messages_are_those_of_sweeper_validate(name, cli, tmp_path):
    text = BAD[name][0]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    code, out, err = cli("validate", path)
    assert code == 1 and out == ""
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.load_config(path)
    assert err.strip() == f"sweeper: error: {info.value}"
    # the same text given as text: the message without the file name
    with pytest.raises(sweeper.ConfigError) as info_text:
        sweeper.load_config(text)
    assert str(info.value) == f"{path}: {info_text.value}"


def test_every_failing_block_is_reported_once():
    text = "goal: {target: goodput}\nsweep: {max_rounds: 0}\n"
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.load_config(text)
    e = info.value
    assert str(e).startswith("invalid config, 2 errors:")
    assert [x["rule"] for x in e.errors] == ["sla_missing", "out_of_range"]
    assert [x["path"] for x in e.errors] == ["goal.sla", "sweep.max_rounds"]
    assert e.rule == "sla_missing"


def test_every_block_and_the_checks_of_run_come_in_one_pass(cli, tmp_path):
    # a misspelt target, a misspelt workload key and an unknown GPU: `sweeper validate`
    # names all three in one run, and so does load_config, with the same words
    text = (
        "goal: {target: paretoo}\n"
        "workload: {isl: 10, osl: 10, num_request_ratio: 1, concurency: 4}\n"
        "evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h201}}\n"
    )
    path = tmp_path / "three.yaml"
    path.write_text(text)
    code, out, err = cli("validate", path)
    assert code == 1 and out == ""
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.load_config(path)
    e = info.value
    assert err.strip() == f"sweeper: error: {e}"
    assert str(e).startswith(f"{path}: invalid config, 3 errors:")
    assert [x["rule"] for x in e.errors] == ["unknown_target", "unknown_key", "evaluator_not_runnable"]
    assert [x["path"] for x in e.errors] == ["goal.target", "workload.concurency", "evaluator"]
    assert "h201" in e.errors[2]["message"]
    # the first failure's attributes are the error's
    assert (e.rule, e.path) == ("unknown_target", "goal.target")
    # as text: the same failures, without the file name
    with pytest.raises(sweeper.ConfigError) as info_text:
        sweeper.load_config(text)
    assert str(e) == f"{path}: {info_text.value}"
    # and validate() raises the same
    with pytest.raises(sweeper.ConfigError) as info_validate:
        sweeper.validate(text)
    assert str(info_validate.value) == str(info_text.value)


def test_a_searched_concurrency_is_the_load():
    c = sweeper.load_config(EXAMPLES / "concurrency-sweep.yaml")
    assert c.space.names == ["tp", "concurrency"]
    workload = c.to_dict()["workload"]
    assert workload == {"isl": 1024, "osl": 1024, "num_request_ratio": 10}
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.load_config(
            "workload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: 8}\n"
            "search_space: {parameters: {concurrency: {values: [4, 8]}}}\n"
        )
    assert info.value.rule == "load_fixed_and_searched"
    assert info.value.path == "workload.concurrency"


def test_checks_beyond_the_schema_are_those_of_run(cli, tmp_path):
    # a command that does not exist, and a built-in preset that is unknown: validate
    # rejects both before any trial, and so does load_config
    cases = {
        "program": "evaluator: {command: [no-such-program-xyz]}\n",
        "preset": "evaluator: {builtin: {model: no-such-model, gpu: h200}}\n",
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        code, _, err = cli("validate", path)
        assert code == 1
        with pytest.raises(sweeper.ConfigError) as info:
            sweeper.load_config(path)
        assert err.strip() == f"sweeper: error: {info.value}", name
        assert info.value.rule == "evaluator_not_runnable"
        assert info.value.path == "evaluator"


def test_unreadable_file_is_an_io_config_error(tmp_path):
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.load_config(str(tmp_path / "missing.yaml"))
    assert info.value.rule == "io" and info.value.path is None
    assert "cannot read config" in str(info.value)
    with pytest.raises(TypeError, match="expected a path"):
        sweeper.load_config(42)


def test_paths_and_text_are_told_apart(tmp_path):
    p = EXAMPLES / "quickstart.yaml"
    for given in (p, str(p), pathlib.PurePath(p)):
        c = sweeper.load_config(given)
        assert c.path == str(p)
        assert c.target == "pareto"
    # text: one line without a config-file suffix, or several lines
    assert sweeper.load_config("goal: {target: e2e_latency}").objectives == [("e2e_latency", "min")]
    assert sweeper.load_config(p.read_text()).path is None
    # an empty document is the all-default config
    assert sweeper.load_config("").target == "throughput"
    # JSON is read too
    assert sweeper.load_config('{"goal": {"target": "pareto"}}').pareto


def test_config_round_trips_through_yaml_json_and_validate():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        c = sweeper.load_config(path)
        assert sweeper.load_config(c.to_yaml()) == c, path
        assert sweeper.load_config(c.to_json()) == c, path
        resolved = sweeper.validate(path)
        assert resolved == c.to_dict()
        assert isinstance(resolved["sweep"]["seed"], int)


def test_config_attributes():
    c = sweeper.load_config(EXAMPLES / "quickstart.yaml")
    assert c.objectives == [("throughput_per_gpu", "max"), ("throughput_per_user", "max")]
    assert c.metrics == c.objectives
    assert c.gpu_budget == 16
    assert c.space.names == ["tp", "replicas", "max_batch_size", "kv_load_ratio"]
    assert c.space.to_dict()["kv_load_ratio"] == {"float": [0.05, 1.0]}
    scalar = sweeper.load_config(EXAMPLES / "throughput.yaml")
    assert scalar.metrics == [("objective", "max")] and not scalar.pareto
    assert "Config(target=" in repr(c)


def test_space_dict_round_trip():
    d = {
        "tp": {"values": [1, 2, 4]},
        "lr": {"float": [0.001, 1.0], "log": True},
        "n": {"int": [1, 64], "log": True},
        "frac": {"values": [0.5, 0.25]},
        "router": {"choices": ["a", "b"]},
        "x": {"float": [0, 1]},
    }
    s = sweeper.Study(d, [("f", "max")]).space
    assert s.names == list(d)
    got = s.to_dict()
    assert got["tp"] == {"values": [1, 2, 4]}
    assert got["lr"] == {"float": [0.001, 1.0], "log": True}
    assert got["n"] == {"int": [1, 64], "log": True}
    assert got["router"] == {"choices": ["a", "b"]}
    assert sweeper.Study(got, [("f", "max")]).space.to_dict() == got
    assert len(s) == 6


def test_space_dict_errors_name_the_parameter():
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.Study({"x": {"float": [1, 0]}}, [("f", "max")])
    assert info.value.path == "search_space.parameters.x.float"
    assert info.value.rule == "range_bounds"
    assert info.value.line is None
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.Study({"x": {"floats": [0, 1]}}, [("f", "max")])
    assert info.value.rule == "unknown_key"
    with pytest.raises(sweeper.ConfigError) as info:
        sweeper.Study({"kv_load_ratio": {"float": [0, 1]}}, [("f", "max")])
    assert info.value.rule == "reserved_parameter"


def test_config_schema_is_the_document_sweeper_schema_prints(cli):
    schema = json.loads(sweeper.config_schema())
    assert schema["title"] == "sweeper sweep config"
    assert {"goal", "workload", "search_space", "evaluator", "sweep"} <= set(schema["properties"])
    code, out, err = cli("schema")
    assert code == 0, err
    assert schema == json.loads(out)
