"""hw/README.md's example config for a numeric keypad, as the tests load it (the host's and
the kernel tier's): the TOML block after the `keypad example` marker."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "hw" / "README.md"


def keypad_example() -> str:
    """The example's TOML, as hw/README.md has it."""
    text = README.read_text()
    found = re.search(r"<!-- keypad example:.*?-->\n```toml\n(.*?)```", text, re.DOTALL)
    assert found, "hw/README.md has no keypad example block"
    return found.group(1)
