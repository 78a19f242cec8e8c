from pathlib import Path

import pytest

from auditor.config import AuditConfig, flagged_keys, load_config, overrides_from_flags
from auditor.errors import ConfigError


def write_pyproject(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_defaults_apply_without_a_pyproject():
    assert load_config(None, {}) == AuditConfig()


def test_tool_audit_table_is_read(tmp_path):
    path = write_pyproject(
        tmp_path,
        "[tool.audit]\ntest_timeout = 3\n[tool.audit.gate]\nmin_line_coverage = 90\n",
    )
    config = load_config(path, {})
    assert config.test_timeout == 3
    assert config.gate.min_line_coverage == 90


def test_flags_override_the_file(tmp_path):
    path = write_pyproject(tmp_path, "[tool.audit]\ntest_timeout = 3\n")
    config = load_config(path, {"test_timeout": 7.5, "gate": {"max_failing_tests": 0}})
    assert config.test_timeout == 7.5
    assert config.gate.max_failing_tests == 0


def test_unknown_key_is_an_error_naming_it(tmp_path):
    path = write_pyproject(tmp_path, "[tool.audit]\ntest_timout = 3\n")
    with pytest.raises(ConfigError, match="unknown key 'test_timout'"):
        load_config(path, {})


def test_unknown_gate_key_is_named_with_its_table(tmp_path):
    path = write_pyproject(tmp_path, "[tool.audit.gate]\nmin_coverage = 3\n")
    with pytest.raises(ConfigError, match=r"unknown key 'gate\.min_coverage'"):
        load_config(path, {})


def test_bad_value_is_an_error_naming_the_key(tmp_path):
    path = write_pyproject(tmp_path, "[tool.audit.gate]\nmin_line_coverage = 150\n")
    with pytest.raises(ConfigError, match=r"bad value for 'gate\.min_line_coverage'"):
        load_config(path, {})


def test_a_bad_flag_value_is_reported_as_the_command_lines_flag(tmp_path):
    with pytest.raises(ConfigError, match="command line: bad value for --timeout: "):
        load_config(None, {"test_timeout": -1})


def test_invalid_toml_is_an_error_naming_the_file(tmp_path):
    path = write_pyproject(tmp_path, "[tool.audit\n")
    with pytest.raises(ConfigError, match=r"cannot read .*pyproject\.toml"):
        load_config(path, {})


@pytest.mark.parametrize(
    ("written", "seconds"), [("90", 90), ("90s", 90), ("5m", 300), ("1.5h", 5400), (45, 45)]
)
def test_a_duration_is_read_the_same_from_the_file_and_from_a_flag(tmp_path, written, seconds):
    value = f'"{written}"' if isinstance(written, str) else written
    path = write_pyproject(tmp_path, f"[tool.audit]\ntime_budget = {value}\n")
    assert load_config(path, {}).time_budget == seconds
    assert load_config(None, {"time_budget": written}).time_budget == seconds


def test_every_timeout_takes_a_duration(tmp_path):
    path = write_pyproject(
        tmp_path,
        '[tool.audit]\ntest_timeout = "2m"\nprobe_time_budget = "30s"\n'
        '[tool.audit.escalation]\nrequest_timeout = "1m"\n',
    )
    config = load_config(path, {})
    assert (config.test_timeout, config.probe_time_budget) == (120, 30)
    assert config.escalation.request_timeout == 60


def test_a_bad_duration_names_the_key_and_the_forms_it_takes(tmp_path):
    path = write_pyproject(tmp_path, '[tool.audit]\ntime_budget = "soon"\n')
    with pytest.raises(ConfigError) as raised:
        load_config(path, {})
    assert str(raised.value).endswith(
        "[tool.audit]: bad value for 'time_budget': expects a duration such as 90s, 5m or "
        "1h; got 'soon'"
    )


def _parsed_flags(*args: str) -> dict:
    """What `audit run ARGS` hands the config, parsed by the real command line parser."""
    from auditor.cli import run

    with run.make_context("run", list(args)) as context:
        return overrides_from_flags(context.params, Path("/work"))


@pytest.mark.parametrize(
    ("flags", "toml"),
    [
        (["--timeout", "2m"], 'test_timeout = "2m"'),
        (["--mutators", "arithmetic,comparison"], 'mutators = ["arithmetic", "comparison"]'),
        (
            ["--mutators", "arithmetic", "--mutators", "comparison"],
            'mutators = "arithmetic,comparison"',
        ),
        (["--shard", "02/8"], 'shard = "2/8"'),
        (["--no-probes", "-j", "3"], "probes = false\njobs = 3"),
        (
            ["--max-smells", "high=0", "--max-smells", "low=9"],
            "gate.max_smells = {high = 0, low = 9}",
        ),
        (["--min-mutation-score", "72.5"], "gate.min_mutation_score = 72.5"),
        (["--deep-model", "m", "--escalate"], 'escalation = {deep_model = "m", enabled = true}'),
    ],
)
def test_a_flag_and_its_pyproject_key_give_the_same_config(tmp_path, flags, toml):
    path = write_pyproject(tmp_path, f"[tool.audit]\n{toml}\n")
    assert load_config(None, _parsed_flags(*flags)) == load_config(path, {})


def test_flags_not_given_override_nothing():
    assert _parsed_flags() == {}


def test_a_path_flag_is_relative_to_the_current_folder():
    overrides = _parsed_flags("--allow-write", "out", "--baseline", "old.json")
    assert overrides["allow_write"] == ["/work/out"]
    assert overrides["gate"]["baseline_report"] == "/work/old.json"


@pytest.mark.parametrize("flag", ["--apply", "--require-escalation"])
def test_applying_or_requiring_hardened_tests_turns_escalation_on(flag):
    assert _parsed_flags(flag, "--no-escalate")["escalation"]["enabled"] is True


def test_a_bad_shard_names_its_flag_and_the_form_it_takes():
    with pytest.raises(ConfigError, match=r"bad value for --shard: expects K/N with 1 <= K <= N"):
        load_config(None, _parsed_flags("--shard", "9/8"))


def test_no_two_keys_share_a_flag_and_every_flag_has_help():
    keys = list(flagged_keys())
    assert len({flagged.flag.name for flagged in keys}) == len(keys)
    assert all(flagged.flag.help for flagged in keys)
