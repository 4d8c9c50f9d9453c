"""The match journal (docs/service.md, "Crash recovery"): every accepted command and every
time mark on disk, so a crash or a power cut never loses the match.

`writer` is the adapter (appends records through the disk writer thread, the heartbeat in
RAM, compaction); `format` is the documented record format and the pure recovery from it,
which `timerd doctor` reads too. Importing the package imports neither.
"""
