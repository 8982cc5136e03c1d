"""A fresh clone, as a newcomer has it (issue 46): no ``../shared`` beside it, no virtualenv activated.

The tests that need real reviews read the IMDB sample committed in ``tests/data`` (never ``../shared``).
"""

from __future__ import annotations

import re
from pathlib import Path

from imdb_data import IMDB_SAMPLE, imdb_sample

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"ROOT\.parent\b|/\s*\"shared\"|\.\./shared")


def test_no_test_reads_data_beside_the_clone():
    """No test module, helper or conftest (in any folder of tests/) builds a path outside the clone such as
    ``ROOT.parent / "shared"``; ``tests/data/make_imdb_sample.py``, the script that rebuilds the committed sample from
    ../shared, is the one exception (no test runs it)."""
    here, maker = Path(__file__).resolve(), ROOT / "tests" / "data" / "make_imdb_sample.py"
    offenders = [f"{f.relative_to(ROOT)}:{n}" for f in sorted((ROOT / "tests").rglob("*.py")) if f not in (here, maker)
                 for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if OUTSIDE.search(line)]
    assert not offenders, f"tests reading data beside the clone (use tests/imdb_data.py): {offenders}"


def test_the_committed_imdb_sample_is_small_and_complete():
    assert IMDB_SAMPLE.stat().st_size < 200_000
    first, short, clear = imdb_sample("first80"), imdb_sample("short50"), imdb_sample("clear40")
    assert [r["row"] for r in first] == list(range(80))
    assert len(short) == 50 and all(len(r["text"]) <= 700 for r in short)
    assert len(clear) == 40 and all(r["rating"] in (1, 10) and len(r["text"]) < 600 for r in clear)
    assert {r["label"] for r in clear} == {0, 1} and all(r["label"] == (r["rating"] >= 7) for r in clear)


def _fake_venv(root: Path) -> Path:
    """A stand-in for .venv: bin/attention-explorer and bin/attention-explorer-score that print their name."""
    bin_dir = root / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("attention-explorer", "attention-explorer-score"):
        (bin_dir / name).write_text(f"#!/bin/sh\necho {name} ran \"$@\"\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir.parent


def test_the_install_puts_the_commands_on_the_path_of_a_new_shell(tmp_path):
    """Issue 46: after build_scripts/install_and_launch.sh the README's later commands (attention-explorer-score ...)
    are found in a new shell: the script links them into ~/.local/bin and adds that folder to PATH in ~/.bashrc
    (once, however often it runs); a file of the user's own there is left alone."""
    import subprocess

    script = (ROOT / "build_scripts" / "install_and_launch.sh").read_text(encoding="utf-8")
    assert script.index("link_entry_points") < script.index("exec ")
    home = tmp_path / "home"
    home.mkdir()
    venv = _fake_venv(tmp_path)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "VENV": str(venv)}
    link = f"source {ROOT / 'build_scripts' / 'common.sh'} && link_entry_points"
    for _ in range(2):
        run = subprocess.run(["bash", "-c", link], env=env, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
    assert "export PATH=" in run.stderr  # what to type in the shell the install ran in
    assert (home / ".bashrc").read_text().count(".local/bin") == 1
    new_shell = subprocess.run(["bash", "-ic", "attention-explorer-score --help"], env={**env, "VENV": ""},
                               capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert new_shell.stdout.strip() == "attention-explorer-score ran --help", new_shell.stderr
    own = home / ".local" / "bin" / "attention-explorer"
    own.unlink()
    own.write_text("#!/bin/sh\necho mine\n")
    run = subprocess.run(["bash", "-c", link], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and own.read_text() == "#!/bin/sh\necho mine\n" and "left" in run.stderr


def test_the_scorer_s_help_explains_its_exit_codes():
    from model.scorer.args import build_parser

    text = " ".join(build_parser().format_help().split())
    for words in ("Exit status: 0 every input was scored", "1 some input could not be scored",
                  "the model could not be loaded", "2 usage error", "130 interrupted"):
        assert words in text, words
