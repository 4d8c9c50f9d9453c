"""The tools: what an operator or a tournament desk runs beside the daemon.

`doctor` (what the daemon needs, in plain words), `install` (timerd as a systemd service), and
the tournament desk: `hall_args` (its command line), `hall_desk` (the desk over MQTT),
`hall_round` (a round's schedule in, its results out) and `hall_board` (every table on one page).
A tool reads the daemon's documented formats and protocols only, never an adapter's internals
(`tests/test_walls.py`).
"""
