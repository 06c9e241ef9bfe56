"""tools/uv_flags.py: pip's index configuration read as pip reads it, as uv flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.uv_flags import pip_settings, uv_flags

REPO = Path(__file__).resolve().parents[2]

LISTING = """\
:env:.find-links='/opt/wheels'
:env:.default-timeout='180'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/srv/other-wheels'
user.index-url='https://mirror.example/simple'
"""


def test_settings_as_pip_reads_them() -> None:
    settings = pip_settings(LISTING)
    assert settings == {
        "find-links": ["/opt/wheels"],  # PIP_FIND_LINKS beats the file's value
        "constraint": ["/etc/xdg/pip/constraints.txt"],
        "extra-index-url": ["file:///opt/pypi/simple", "file:///opt/pypi-more/simple"],
        "index-url": ["https://mirror.example/simple"],
    }


def test_flags_weigh_every_index_as_pip_does() -> None:
    flags = uv_flags(pip_settings(LISTING))
    assert flags[:2] == ["--index-strategy", "unsafe-best-match"]
    pairs = list(zip(flags[2::2], flags[3::2], strict=True))
    assert ("--extra-index-url", "file:///opt/pypi-more/simple") in pairs
    assert ("--constraint", "/etc/xdg/pip/constraints.txt") in pairs
    assert ("--find-links", "/opt/wheels") in pairs and len(pairs) == 5
    assert uv_flags({}) == ["--index-strategy", "unsafe-best-match"]


def test_the_script_prints_this_machines_flags_on_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "tools/uv_flags.py"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    assert done.stdout.startswith("--index-strategy unsafe-best-match")
