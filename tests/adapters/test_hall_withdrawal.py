"""A table withdraws its result when its match reopens, also when it was killed before the
withdrawal left (issue 41 item 2), and every result it sends carries its proof (item 3): the
hall link in-process, without a broker (it keeps trying one in the background)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from tests.adapters.test_hall import SAMPLE_RESULT, hall_config, service
from timerd.adapters.hall.link import LATEST_NAME, SECRET_NAME, HallLink, Outbox
from timerd.adapters.hall.protocol import REOPENED, proof_follows
from timerd.core.effects import Phase


def pending(link: HallLink) -> list[dict[str, object]]:
    return [json.loads(e.payload) for e in link.outbox.pending()]


def test_a_match_reopened_before_a_kill_is_withdrawn_at_the_next_start(tmp_path: Path) -> None:
    """The run that reopened the match died before its withdrawal was on disk: the next start
    finds the match in play (the journal restored it) under the id of the result the desk
    holds, and withdraws it. Without this, the desk exported the taken-back result as final
    until the match ended again."""
    async def main() -> None:
        outbox = tmp_path / "outbox"
        first = HallLink(hall_config(), service(), Outbox(outbox))
        async with first:
            result_id = first.publish_result(SAMPLE_RESULT)
        assert json.loads((outbox / LATEST_NAME).read_bytes())["withdrawn"] is False
        sent = pending(first)[-1]
        assert oct(os.stat(outbox / SECRET_NAME).st_mode & 0o777) == "0o600"

        svc = service()  # the restart: the journal restored the reopened match, paused
        svc.match.phase, svc.match.match_id = Phase.PAUSED, result_id
        second = HallLink(hall_config(), svc, Outbox(outbox))
        async with second:
            withdrawal = pending(second)[-1]
            assert (withdrawal["id"], withdrawal["withdrawn"], withdrawal["result"],
                    withdrawal["revision"]) == (result_id, REOPENED, None, 1)
            # The same table's chain: the withdrawal's proof hashes to the result's.
            assert proof_follows(withdrawal["proof"], 1, sent["proof"])
        third = HallLink(hall_config(), svc, Outbox(outbox))
        async with third:  # withdrawn already: not again
            assert [m.get("withdrawn") for m in pending(third)] == [None, REOPENED]

    asyncio.run(main())
