"""timerd's config: layered TOML, validated into frozen dataclasses.

Layers, later wins: the defaults (`sections.py`, shipped in the package), then
`/etc/timerd/timerd.toml` (or `--config PATH`), then `-o section.key=value` options
(`layers.py`). Every problem of the merged result is reported at once with its key path; a bad
config never starts a half-working daemon. `timerd config` prints the effective config as TOML.

- `sections.py`: each part's section (`WebConfig`, `GpioConfig`, the signals' patterns, ...)
  and `Config`, all of them, with defaults and checks;
- `paths.py`: where the files are (config, socket, state, runtime; per `--instance`);
- `layers.py`: `load`, the layers merged and checked;
- `schema.py`: TOML tables into frozen dataclasses, every error with its key path (the rule
  profiles are read with it too);
- `profiles.py`: the rule profiles' loader (the built-in ones are TOML data in
  `timerd/profiles/`, which holds no code).

A part imports its own section from here (`from timerd.config import WebConfig`).
"""

from timerd.config.layers import load, parse_override
from timerd.config.paths import (
    INSTANCE_ENV,
    INSTANCE_HINT,
    SYSTEM_CONFIG,
    SYSTEM_RUNTIME,
    InUse,
    UnsafePath,
    dir_name,
    fallback_runtime_dir,
    instance,
    private_directory,
    runtime_dir,
    state_dir,
    system_config,
    system_socket,
    trusted_socket,
)
from timerd.config.sections import (
    IDLE_WHY,
    MASK,
    SECRETS,
    TOPIC_SPECIAL,
    Config,
    ControlConfig,
    GpioConfig,
    HallConfig,
    KeypadConfig,
    LogConfig,
    MatchConfig,
    ResultsConfig,
    SerialConfig,
    ServiceConfig,
    SignalOutput,
    SpeakerConfig,
    StateConfig,
    TableConfig,
    UiConfig,
    WebConfig,
    hall_outbox,
)

__all__ = [
    "IDLE_WHY", "INSTANCE_ENV", "INSTANCE_HINT", "MASK", "SECRETS", "SYSTEM_CONFIG",
    "SYSTEM_RUNTIME", "TOPIC_SPECIAL", "Config", "ControlConfig", "GpioConfig", "HallConfig",
    "InUse", "KeypadConfig", "LogConfig", "MatchConfig", "ResultsConfig", "SerialConfig",
    "ServiceConfig", "SignalOutput", "SpeakerConfig", "StateConfig", "TableConfig", "UiConfig",
    "UnsafePath", "WebConfig", "dir_name", "fallback_runtime_dir", "hall_outbox", "instance",
    "load", "parse_override", "private_directory", "runtime_dir", "state_dir", "system_config",
    "system_socket", "trusted_socket",
]
