"""timerd: match timer and buzzer daemon for table hockey (ITHF) and ball hockey (ISBHF)."""

__version__ = "0.1.0"
