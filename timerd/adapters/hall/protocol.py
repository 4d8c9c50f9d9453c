"""Hall mode's MQTT protocol (docs/hall.md): the topics, the result message's version, and
the broker client, shared by the tables (`timerd.adapters.hall.link`) and the tournament desk.

A documented format: tools may import this module (`timerd hall`, the hall board), and only
this one, of hall mode; everything in it is the wire contract or how to reach the broker, never
a table's state. Every table of a hall publishes under `timerd/<hall>/tables/<table>/`
(`state`, `events`, `results`, `status`, and takes commands on `cmd`); the whole hall's
commands go to `timerd/<hall>/cmd`. A result message is `{"version": RESULT_VERSION, "id":
the match id, "hall", "table", "round", "wall", "revision", "result": the results line,
"proof"}`; when the match reopens, a withdrawal takes its place (`"withdrawn": "reopened"`,
`"result": null`). A table answers each command with a reply record on its `events` topic
(`reply_record`).

Revisions cannot be forged past (issue 41 item 3): each result and withdrawal of a match
carries a `proof`, a link of a hash chain (`chain_proof`) that only its table can extend. The
chain starts from a seed only the table knows (`match_seed`: its secret and the match id) and
runs backwards, as in S/KEY (RFC 1760): the proof at position p is sha256 applied
`CHAIN_LENGTH - p` times to the seed, so a later proof hashes to every earlier one
(`proof_follows`), and nobody who saw the earlier ones can compute a later one. A result of
revision n is at position 2n, the withdrawal before it (its match reopened) at 2n - 1
(`proof_position`). The desk takes a revision only when its proof follows the one it holds:
a table's genuine next correction always does, also after revisions the desk never saw; a
jump, a replayed proof with other content or a revision past `MAX_REVISION` does not.

aiomqtt (the extra `timerd[hall]`) is imported only when asked for (`import_aiomqtt`).
"""

from __future__ import annotations

import hashlib
import hmac
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from timerd.config import HallConfig
from timerd.core.effects import refusal
from timerd.core.refused import CommandRefused, named
from timerd.wire import refused_reply

if TYPE_CHECKING:
    import aiomqtt

#: How long one exchange with the broker (connect, acknowledgement) may take, in real seconds.
BROKER_TIMEOUT_S = 10.0
#: The largest message of the hall's topics: the desk parses no larger one (a result with
#: every goal is a few KiB), and the broker `timerd hall secure` configures takes no packet
#: much larger (`max_packet_size`).
MAX_PAYLOAD_BYTES = 256 * 1024
#: The format of the result message on `tables/<table>/results` (docs/hall.md); 2: with
#: `proof`, and withdrawals (issue 41).
RESULT_VERSION = 2
#: The most corrections one match's result may have: revisions 0 to this (a match corrected
#: more often is not a match; a higher revision on the wire is absurd, set aside).
MAX_REVISION = 100
#: A match's proof chain has a link per position: 2n for revision n's result, 2n - 1 for
#: the withdrawal before it. Making one costs CHAIN_LENGTH sha256 of 32 bytes (a median of
#: 0.06 ms on the development VM: `python -m bench.hall_proof`).
CHAIN_LENGTH = 2 * MAX_REVISION
#: Why a table withdrew its result (`withdrawn`): the finished match was reopened (an undo
#: of the entry that ended it, ITHF 6.1 with 4.8) and is in play again.
REOPENED = "reopened"


def proof_position(revision: int, withdrawn: bool) -> int:
    """The chain position of revision `revision`'s result, or of the withdrawal that
    announces it (`withdrawn`): the withdrawal comes first, the result supersedes it."""
    return 2 * revision - 1 if withdrawn else 2 * revision


def match_seed(secret: bytes, match_id: str) -> bytes:
    """Where the proof chain of match `match_id` starts: known only to its table."""
    return hmac.new(secret, match_id.encode(), hashlib.sha256).digest()


def chain_proof(seed: bytes, position: int) -> str:
    """The proof at `position` (0 to CHAIN_LENGTH) of the chain from `seed`, as hex."""
    value = seed
    for _ in range(CHAIN_LENGTH - position):
        value = hashlib.sha256(value).digest()
    return value.hex()


def proof_follows(later: object, steps: int, earlier: object) -> bool:
    """Whether the proof `later`, `steps` positions after `earlier`, hashes to it (both hex
    strings of 32 bytes; anything else never follows)."""
    if not (isinstance(later, str) and isinstance(earlier, str) and 0 <= steps <= CHAIN_LENGTH):
        return False
    try:
        value = bytes.fromhex(later)
    except ValueError:
        return False
    if len(value) != hashlib.sha256().digest_size:
        return False
    for _ in range(steps):
        value = hashlib.sha256(value).digest()
    return hmac.compare_digest(value.hex(), earlier)


def reply_record(command: str, request_id: Any, wall: float,
                 answer: Mapping[str, Any]) -> dict[str, Any]:
    """A table's answer to a desk's command (`id` is the desk's): `answer` is what it did (a
    `wire.done_reply`: `code`, `params` and the English `detail`) or why not (a
    `wire.refused_reply` or `wire.error_reply`); the reply's `format` is wire's."""
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
