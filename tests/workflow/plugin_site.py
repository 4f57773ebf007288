"""Install the worked plug-in (and test plug-ins) into a site directory the way ``pip install``
leaves a package: the package itself and a dist-info with its metadata and entry points
(what ``importlib.metadata`` discovers). Used by the tests, which need no network or build."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "plugin_example"
GROUP = "dprl.algorithms"


def install_dist(site: Path, name: str, version: str, entry_points: dict[str, str]) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")


def install_example(site: Path) -> None:
    """The example package and the entry points its ``pyproject.toml`` declares."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    shutil.copytree(EXAMPLE / "dprl_example_plugin", site / "dprl_example_plugin")
    install_dist(site, project["name"], project["version"], project["entry-points"][GROUP])
