"""One status document per dispatch (issue 14, invariant 5): the service builds it once and
every output that shows the state reads that one, with every effect of the dispatch."""

from __future__ import annotations

from typing import Any

from tests.conftest import play
from timerd.core.effects import Effect, Signal, SignalKind
from timerd.core.status import Status
from timerd.service import Service


class Reader:
    """An output that reads the document the way the web page and the serial display do."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.seen: list[tuple[Effect, dict[str, Any], int]] = []

    def notify(self, effect: Effect, status: Status) -> None:
        self.seen.append((effect, self.service.status_dict(), self.service.documents_built))


def test_a_dispatch_builds_one_document_and_every_output_reads_it() -> None:
    readers: list[Reader] = []

    def setup(service: Service) -> None:
        readers.extend([Reader(service), Reader(service)])
        service.outputs.extend(readers)
        service.status_extras.append(lambda: {"muted": False})

    play("ithf", [(0, "start"), (100, "pause"), (105, "resume")], until=330, setup=setup)
    first, second = readers
    # The pause: its phase change and its chirp are one dispatch with one document.
    pause = [i for i, (e, _, _) in enumerate(first.seen)
             if isinstance(e, Signal) and e.kind is SignalKind.PAUSE][0]
    assert first.seen[pause - 1][1] is first.seen[pause][1]
    assert first.seen[pause - 1][2] == first.seen[pause][2]
    # Both outputs got the same object, with the adapters' keys and its format.
    for (_, a, built_a), (_, b, built_b) in zip(first.seen, second.seen, strict=True):
        assert a is b
        assert built_a == built_b
        assert a["muted"] is False
        assert a["format"] == 1
    # Later dispatches build new documents: the final's shows the match finished.
    assert first.seen[-1][1]["phase"] == "finished"
