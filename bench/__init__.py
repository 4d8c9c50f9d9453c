"""timerd's benchmark: signal timing accuracy, reaction latency and footprint, measured in real
time on the machine it runs on, side by side with two naive timer designs (`bench/run`).

Layout: `play` is one player of a benchmark match in its own process (timerd or a baseline, on
hooked gpiozero mock pins), `baselines` the two naive designs, `analysis` turns pin instants into
errors and percentiles, `footprint` runs the real daemon as a subprocess, `report` writes
`results.json` and the table in `docs/BENCHMARKS.md`, and `__main__` runs it all.
"""
