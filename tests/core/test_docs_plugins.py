"""docs/plugins.md's example runs as written: every ``python`` code block of the page,
executed in order in one namespace (so CI runs the documented plug-in)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


def test_the_code_blocks_are_found():
    assert python_blocks("a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\n```\n") == ["x = 1\n", "y = 2\n"]


def test_the_plugin_example_of_docs_plugins_runs(capsys):
    blocks = python_blocks(DOC.read_text())
    assert blocks, "docs/plugins.md has no python code block"
    namespace: dict = {"__name__": "docs_plugins_example"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the documented example itself
    assert namespace["PRIVATE_GREEDY"].privacy == "pure" and namespace["table"]["episode"].iloc[-1] == namespace["T"]
    assert "regret" in capsys.readouterr().out
