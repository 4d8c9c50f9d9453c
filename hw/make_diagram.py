#!/usr/bin/env python3
"""Draw hw/wiring.svg from the wiring table in hw/README.md.

    python3 hw/make_diagram.py          # rewrite hw/wiring.svg
    python3 hw/make_diagram.py --check  # exit 1 if hw/wiring.svg is not up to date

The table between the `wiring:begin` and `wiring:end` markers is the one source: the diagram
shows the Pi's 40-pin header (odd pins on the left, even on the right, as you look at the board
with the header at the top right), every part at its physical pin, and the ground and supply
pins the parts return to. Standard library only.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
SVG = HERE / "wiring.svg"

#: The 40-pin header of every Raspberry Pi since the B+: physical pin -> what it carries.
HEADER: dict[int, str] = {
    1: "3V3", 2: "5V", 3: "GPIO2", 4: "5V", 5: "GPIO3", 6: "GND", 7: "GPIO4", 8: "GPIO14",
    9: "GND", 10: "GPIO15", 11: "GPIO17", 12: "GPIO18", 13: "GPIO27", 14: "GND",
    15: "GPIO22", 16: "GPIO23", 17: "3V3", 18: "GPIO24", 19: "GPIO10", 20: "GND",
    21: "GPIO9", 22: "GPIO25", 23: "GPIO11", 24: "GPIO8", 25: "GND", 26: "GPIO7",
    27: "GPIO0", 28: "GPIO1", 29: "GPIO5", 30: "GND", 31: "GPIO6", 32: "GPIO12",
    33: "GPIO13", 34: "GND", 35: "GPIO19", 36: "GPIO16", 37: "GPIO26", 38: "GPIO20",
    39: "GND", 40: "GPIO21",
}

#: Part kinds, by the first word of the table's "Part" column, and their colour.
COLOURS = {"button": "#2b6cb0", "buzzer": "#c05621", "relay": "#9b2c2c", "led": "#2f855a"}
SUPPLY_COLOURS = {"GND": "#1a202c", "3V3": "#d69e2e", "5V": "#e53e3e"}


@dataclass(frozen=True)
class Row:
    part: str
    key: str
    bcm: int
    physical: int
    active: str  # "low" or "high"
    kind: str  # button, buzzer, relay, led


def read_table(text: str) -> list[Row]:
    """The wiring table's rows; ValueError names the first line that does not parse."""
    block = re.search(r"<!-- wiring:begin -->(.*?)<!-- wiring:end -->", text, re.S)
    if block is None:
        raise ValueError("hw/README.md has no <!-- wiring:begin --> ... <!-- wiring:end -->")
    rows = []
    for line in block.group(1).strip().splitlines()[2:]:  # after the header and the rule
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        try:
            part, key, bcm, physical, active = cells[:5]
            kind = next(k for k in COLOURS if k in part.lower())
            rows.append(Row(part, key, int(bcm.removeprefix("GPIO")), int(physical),
                            active.split()[0], kind))
        except (ValueError, StopIteration):
            raise ValueError(f"wiring table line does not parse: {line!r}") from None
    return rows


def render(rows: list[Row]) -> str:
    """The SVG, deterministic (the test compares it with the file in the repository)."""
    by_pin = {r.physical: r for r in rows}
    pitch, top, width = 26, 60, 980
    height = top + 20 * pitch + 70
    left_x, right_x = 440, 540  # the two pin columns
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="DejaVu Sans, Arial, sans-serif" font-size="13">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           '<text x="490" y="28" text-anchor="middle" font-size="17" font-weight="bold">'
           'timerd wiring: Raspberry Pi 40-pin header</text>',
           '<text x="490" y="46" text-anchor="middle" fill="#4a5568">made from hw/README.md by '
           'hw/make_diagram.py; buttons close to GND, outputs drive high</text>',
           f'<rect x="{left_x - 30}" y="{top - 16}" width="{right_x - left_x + 60}" '
           f'height="{20 * pitch + 8}" rx="6" fill="#2d3748"/>']
    for pin, name in HEADER.items():
        row_y = top + (pin - 1) // 2 * pitch
        odd = pin % 2 == 1
        x = left_x if odd else right_x
        part = by_pin.get(pin)
        fill = (COLOURS[part.kind] if part else SUPPLY_COLOURS.get(name, "#a0aec0"))
        out.append(f'<circle cx="{x}" cy="{row_y}" r="8" fill="{fill}" stroke="white"/>')
        out.append(f'<text x="{x + (-14 if odd else 14)}" y="{row_y + 4}" '
                   f'text-anchor="{"end" if odd else "start"}" fill="white" font-size="10">'
                   f'{pin}</text>')
        label = f"{name}: {part.part} (active {part.active})" if part else (
            name if name in SUPPLY_COLOURS else "")
        if not label:
            continue
        colour = fill if part else "#4a5568"
        end = 20 if odd else width - 20
        anchor = "start" if odd else "end"
        edge = left_x - 30 if odd else right_x + 30  # the leader starts at the board's edge
        line_end = edge - 50 if odd else edge + 50
        out.append(f'<line x1="{edge}" y1="{row_y}" x2="{line_end}" y2="{row_y}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{end}" y="{row_y + 4}" text-anchor="{anchor}" fill="{colour}">'
                   f'{escape(label)}</text>')
    legend_y = top + 20 * pitch + 30
    for i, (kind, colour) in enumerate(COLOURS.items()):
        out.append(f'<circle cx="{250 + i * 140}" cy="{legend_y}" r="7" fill="{colour}"/>')
        out.append(f'<text x="{262 + i * 140}" y="{legend_y + 4}">{kind}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    svg = render(read_table(README.read_text()))
    if "--check" in argv:
        if SVG.read_text() != svg:
            print("hw/wiring.svg is out of date: run python3 hw/make_diagram.py",
                  file=sys.stderr)
            return 1
        return 0
    SVG.write_text(svg)
    print(f"wrote {SVG}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
