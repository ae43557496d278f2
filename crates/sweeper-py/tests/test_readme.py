"""The Python example of the crate README runs as written (from the repository root)."""

import re

from conftest import ROOT


def test_the_readme_example_runs(monkeypatch, capsys):
    text = (ROOT / "crates" / "sweeper-py" / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    monkeypatch.chdir(ROOT)
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    assert "on the front" in capsys.readouterr().out


def test_the_python_quickstart_runs():
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "quickstart.py")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert "front (tok/s/gpu, tok/s/user):" in p.stdout and "hypervolume" in p.stdout


def test_the_package_docstring_examples_run():
    import doctest

    import sweeper

    failed, attempted = doctest.testmod(sweeper)
    assert attempted > 0 and failed == 0
