"""Hall mode's MQTT protocol (docs/hall.md): the topics, the result message's version, and
the broker client, shared by the tables (`timerd.adapters.hall.link`) and the tournament desk.

A documented format: tools may import this module (`timerd hall`, the hall board), and only
this one, of hall mode; everything in it is the wire contract or how to reach the broker, never
a table's state. Every table of a hall publishes under `timerd/<hall>/tables/<table>/`
(`state`, `events`, `results`, `status`, and takes commands on `cmd`); the whole hall's
commands go to `timerd/<hall>/cmd`. A result message is `{"version": RESULT_VERSION, "id":
the match id, "hall", "table", "round", "wall", "result": the results line}`. A table
answers each command with a reply record on its `events` topic (`reply_record`).

aiomqtt (the extra `timerd[hall]`) is imported only when asked for (`import_aiomqtt`).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from timerd.config import HallConfig
from timerd.core.effects import refusal
from timerd.core.refused import CommandRefused, named
from timerd.wire import REPLY_FORMAT, refused_reply

if TYPE_CHECKING:
    import aiomqtt

#: How long one exchange with the broker (connect, acknowledgement) may take, in real seconds.
BROKER_TIMEOUT_S = 10.0
#: The format of the result message on `tables/<table>/results` (docs/hall.md).
RESULT_VERSION = 1


def reply_record(command: str, request_id: Any, wall: float, *, detail: str = "",
                 refused: dict[str, Any] | None = None) -> dict[str, Any]:
    """A table's answer to a desk's command (`id` is the desk's): done with its `detail`, or
    `refused` (a `wire.refused_reply` or `wire.error_reply`); the reply's `format` is wire's."""
    answer = refused or {"format": REPLY_FORMAT, "ok": True, "detail": detail}
    return {"type": "reply", "command": command, "id": request_id, **answer, "wall": wall}


def internal_error(command: str) -> dict[str, Any]:
    """The refusal of a command that failed with a bug, not a rule (logged with its
    traceback where it failed): its code, `refused.internal`, not the exception's text."""
    return refused_reply(refusal(named(command, CommandRefused("internal"))))


class HallUnavailable(RuntimeError):
    """Hall mode was asked for, but aiomqtt is not installed."""


def import_aiomqtt() -> ModuleType:
    """aiomqtt, or HallUnavailable saying how to install it."""
    try:
        import aiomqtt  # noqa: PLC0415 (only in hall mode)
    except ImportError as exc:
        raise HallUnavailable(
            "hall mode needs the aiomqtt package: `pip install aiomqtt` in timerd's environment "
            "(`timerd install` includes it; in a checkout `pip install -e '.[hall]'`), or set "
            f"hall.enabled = false; {exc}") from None
    return aiomqtt


@dataclass(frozen=True)
class Topics:
    """The topic names of one hall; `table="+"` gives the desk's wildcards."""

    hall: str
    table: str

    @property
    def base(self) -> str:
        return f"timerd/{self.hall}/tables/{self.table}"

    @property
    def state(self) -> str:
        return f"{self.base}/state"

    @property
    def events(self) -> str:
        return f"{self.base}/events"

    @property
    def results(self) -> str:
        return f"{self.base}/results"

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    @property
    def table_cmd(self) -> str:
        return f"{self.base}/cmd"

    @property
    def hall_cmd(self) -> str:
        return f"timerd/{self.hall}/cmd"


def table_of(topic: str) -> str | None:
    """The table id in `timerd/<hall>/tables/<table>/...`, or None for another topic."""
    parts = topic.split("/")
    return parts[3] if len(parts) >= 5 and parts[2] == "tables" else None


#: The CONNACK reasons of a refused login: MQTT 3.1.1's 4 (bad user name or password) and 5
#: (not authorised), MQTT 5's 134 and 135.
LOGIN_REFUSED = frozenset({4, 5, 134, 135})


def broker_error(exc: Exception) -> str:
    """What a failed broker connection says (aiomqtt's MqttError), with the way out when the
    broker refused the login: a table or desk with a wrong password otherwise repeats "Not
    authorized" without naming the keys that hold the login."""
    rc = getattr(exc, "rc", None)
    if getattr(rc, "value", rc) in LOGIN_REFUSED:
        return (f"{exc}: the broker refused the login; check hall.username and hall.password "
                "(`timerd hall secure` writes each table's and the desk's login)")
    return str(exc)


def mqtt_client(mqtt: ModuleType, config: HallConfig, identifier: str, rate: float = 1.0,
                will: Any = None) -> aiomqtt.Client:
    """An aiomqtt client for `config`'s broker (TLS, login), shared by the tables and the desk.

    `rate` is loop seconds per real second (`--speed`): the broker's timeouts are real time.
    """
    tls = None
    if config.tls:
        tls = ssl.create_default_context(cafile=config.ca_file or None)
    client: aiomqtt.Client = mqtt.Client(
        config.host, config.port, identifier=identifier,
        username=config.username or None, password=config.password or None,
        tls_context=tls, will=will, keepalive=max(5, round(config.heartbeat_s * 2)),
        timeout=BROKER_TIMEOUT_S * rate)
    return client
