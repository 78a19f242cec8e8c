"""The sitecustomize that serves a mutant to the Python processes a test starts."""

import marshal
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType

import pytest

from auditor.baseline.child import SUBPROCESS_SITE
from auditor.mutation.runner import ServedMutant


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A package run as `python -m tiny`, its bytecode cached from the original source."""
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "__init__.py").write_text("")
    (tmp_path / "tiny" / "__main__.py").write_text("from tiny.core import value\nprint(value())\n")
    (tmp_path / "tiny" / "core.py").write_text("def value():\n    return 1\n")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tmp_path / "tiny")], check=True)
    return tmp_path


def run_tiny(root: Path, mutant_spec: Path | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("AUDIT_MUTANT", "PYTHONPATH")}
    env["PYTHONPATH"] = str(SUBPROCESS_SITE)
    if mutant_spec is not None:
        env["AUDIT_MUTANT"] = str(mutant_spec)
    done = subprocess.run(
        [sys.executable, "-m", "tiny"], cwd=root, env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout


def offer(root: Path, file: str, source: str, code: CodeType | None = None) -> tuple[Path, Path]:
    """The spec a mutant's child writes, as the runner writes it."""
    served = ServedMutant(root / "mutant.spec")
    served.offer(file, source, code)
    del os.environ["AUDIT_MUTANT"]  # set for the child's own subprocesses, not this one
    return served.spec, served.applied


def test_a_subprocess_imports_the_mutated_source_instead_of_the_file_or_its_bytecode(package):
    core = os.path.realpath(package / "tiny" / "core.py")
    spec, applied = offer(package, core, "def value():\n    return 2\n")
    assert run_tiny(package, spec) == "2\n"
    assert applied.exists()
    assert (package / "tiny" / "core.py").read_text() == "def value():\n    return 1\n"


def test_the_main_module_of_python_m_is_served_too(package):
    main = os.path.realpath(package / "tiny" / "__main__.py")
    spec, applied = offer(package, main, "print('mutated')\n")
    assert run_tiny(package, spec) == "mutated\n"
    assert applied.exists()


def test_later_processes_load_the_code_the_first_one_compiled(package):
    core = os.path.realpath(package / "tiny" / "core.py")
    spec, _ = offer(package, core, "def value():\n    return 2\n")
    assert run_tiny(package, spec) == "2\n"
    assert (package / "mutant.code").exists()
    # the source changes, the kept code does not: a later process must run the kept code
    offer(package, core, "def value():\n    return 3\n")
    assert run_tiny(package, spec) == "2\n"


def test_a_subprocess_loads_the_code_the_mutants_child_compiled(package):
    core = os.path.realpath(package / "tiny" / "core.py")
    # code unlike its source: the process must run the code, not compile the source
    code = compile("def value():\n    return 3\n", core, "exec", dont_inherit=True)
    spec, applied = offer(package, core, "def value():\n    return 2\n", code)
    assert run_tiny(package, spec) == "3\n"
    assert applied.exists()


def test_code_kept_by_another_interpreter_is_compiled_again(package):
    core = os.path.realpath(package / "tiny" / "core.py")
    spec, _ = offer(package, core, "def value():\n    return 2\n")
    elsewhere = compile("def value():\n    return 9\n", core, "exec")
    another_magic = b"\x00\x00\r\n\x00"  # another bytecode version, no -O
    (package / "mutant.code").write_bytes(another_magic + marshal.dumps(elsewhere))
    assert run_tiny(package, spec) == "2\n"


def test_a_process_run_with_dash_o_does_not_load_code_compiled_without_it(package):
    main = os.path.realpath(package / "tiny" / "__main__.py")
    spec, _ = offer(package, main, "assert False, 'asserts kept'\nprint('asserts stripped')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(SUBPROCESS_SITE), AUDIT_MUTANT=str(spec))
    plain = subprocess.run(
        [sys.executable, "-m", "tiny"], cwd=package, env=env, capture_output=True
    )
    assert b"asserts kept" in plain.stderr
    optimized = subprocess.run(
        [sys.executable, "-O", "-m", "tiny"], cwd=package, env=env, capture_output=True, text=True
    )
    assert optimized.stdout == "asserts stripped\n"


def test_without_a_mutant_the_subprocess_runs_the_original_and_marks_nothing(package):
    assert run_tiny(package, None) == "1\n"
    assert not (package / "mutant.applied").exists()


def test_a_mutant_of_a_file_the_subprocess_never_imports_is_not_marked_applied(package):
    spec, applied = offer(package, str(package / "elsewhere.py"), "x = 1\n")
    assert run_tiny(package, spec) == "1\n"
    assert not applied.exists()


def run_script(root: Path, mutant_spec: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(SUBPROCESS_SITE), AUDIT_MUTANT=str(mutant_spec))
    return subprocess.run(
        [sys.executable, "tiny/script.py", "x"], cwd=root, env=env, capture_output=True, text=True
    )


def run_mutated_script(root: Path, mutated: str) -> subprocess.CompletedProcess[str]:
    """`python tiny/script.py x` with the script's mutant served."""
    script = root / "tiny" / "script.py"
    script.write_text("print('original')\n")
    spec, _ = offer(root, os.path.realpath(script), mutated)
    return run_script(root, spec)


def test_a_script_run_by_its_path_runs_the_mutant_as_main_with_its_folder_on_the_path(package):
    script = package / "tiny" / "script.py"
    script.write_text("import core\nprint(__name__, core.value())\n")
    (package / "tiny" / "core.py").write_text("def value():\n    return 1\n")
    mutated = "import core, sys\nprint(__name__, core.value() + 1, sys.argv[1:])\n"
    spec, applied = offer(package, os.path.realpath(script), mutated)
    done = run_script(package, spec)
    assert (done.returncode, done.stdout) == (0, "__main__ 2 ['x']\n")
    assert applied.exists()


def test_a_mutated_script_knows_its_absolute_path_as_the_interpreter_would_tell_it(package):
    mutated = "import sys\nprint(__file__ == sys._getframe().f_code.co_filename, __file__)\n"
    done = run_mutated_script(package, mutated)
    assert done.stdout == f"True {package / 'tiny' / 'script.py'}\n"


def test_a_mutated_script_exits_as_the_interpreter_would(package):
    mutated = "import atexit\natexit.register(print, 'bye')\nraise SystemExit(3)\n"
    done = run_mutated_script(package, mutated)
    assert (done.returncode, done.stdout) == (3, "bye\n")


def test_an_exception_escaping_a_mutated_script_is_printed_and_exits_with_1(package):
    done = run_mutated_script(package, "raise ValueError('mutant')\n")
    assert done.returncode == 1
    assert "ValueError: mutant" in done.stderr


def test_the_environments_own_sitecustomize_still_runs(package, tmp_path):
    theirs = tmp_path / "their_site"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIRS'] = 'ran'\n")
    env = {k: v for k, v in os.environ.items() if k not in ("AUDIT_MUTANT", "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join([str(SUBPROCESS_SITE), str(theirs)])
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ.get('THEIRS'))"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert (done.stdout, done.stderr) == ("ran\n", "")
