"""timerd: match timer and buzzer daemon for table hockey (ITHF) and ball hockey (ISBHF)."""

__version__ = "0.2.0"


def version() -> str:
    """The installed timerd's version, from its package metadata (what pip installed); the
    source's own when it runs from a checkout that is not installed."""
    import importlib.metadata  # noqa: PLC0415 (only for --version and doctor)

    try:
        return importlib.metadata.version("timerd")
    except importlib.metadata.PackageNotFoundError:
        return __version__
