"""What a result's proof costs (issue 41 item 3): `python -m bench.hall_proof`.

A table makes one proof per result or withdrawal it sends (`protocol.chain_proof`: the seed,
then up to `CHAIN_LENGTH` SHA-256 of 32 bytes, on the loop, once per match end or
correction); the desk checks one per revision it takes (`protocol.proof_follows`, at most
`CHAIN_LENGTH` hashes). Prints JSON: the median and the largest of `RUNS` timings, in ms, of
the worst case of each (revision 0's proof, the whole chain checked).
"""

from __future__ import annotations

import json
import platform
import statistics
import time

from timerd.adapters.hall.protocol import CHAIN_LENGTH, chain_proof, match_seed, proof_follows

RUNS = 1000


def timed_ms(job: object) -> dict[str, float]:
    """The median and the largest of RUNS runs of `job`, in milliseconds."""
    assert callable(job)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        job()
        times.append((time.perf_counter() - start) * 1000)
    return {"median_ms": round(statistics.median(times), 4), "max_ms": round(max(times), 4)}


def main() -> None:
    secret, match_id = bytes(32), "20261207T013430Z-96e9e3"
    first = chain_proof(match_seed(secret, match_id), 0)
    last = chain_proof(match_seed(secret, match_id), CHAIN_LENGTH)
    print(json.dumps({
        "machine": platform.machine(), "python": platform.python_version(), "runs": RUNS,
        "chain_length": CHAIN_LENGTH,
        "table_makes_a_proof": timed_ms(lambda: chain_proof(match_seed(secret, match_id), 0)),
        "desk_checks_the_whole_chain": timed_ms(lambda: proof_follows(last, CHAIN_LENGTH,
                                                                      first)),
    }, indent=2))


if __name__ == "__main__":
    main()
