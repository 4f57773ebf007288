"""pyproject.toml and environment.yml list the same dependencies."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_matches_pyproject():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in py["dependencies"] + py["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)} - {"python", "pip"}
    # packages installed by pip (the project itself, "-e .", excepted)
    pip = {_name(d) for e in env["dependencies"] if isinstance(e, dict) for d in e.get("pip", []) if not d.startswith("-e")}
    assert conda | pip == wanted
    assert not conda & pip, "listed both for conda and for pip"
