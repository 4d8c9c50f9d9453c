"""The results file (docs/scoring.md): one JSON line per finished match, never only in a log.

`file` is the adapter (writes each result through the disk writer, keeps a pending copy in
the state directory while the results file refuses it); `format` is the documented line format and
its reader, which the tools and the web API use. Importing the package imports neither.
"""
