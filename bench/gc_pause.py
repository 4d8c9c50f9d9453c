"""How long one full collection of Python's cyclic garbage collector holds the daemon's
thread, before and after `timerd.priority.freeze_heap` (issue 33's loop that nothing may hold):
`python -m bench.gc_pause`.

It imports what `timerd run` imports and builds a table as the daemon does (simulated pins,
web server and speaker modules loaded), then times `gc.collect()` five times before the freeze
and five times after it, and prints both as JSON. The collector runs such a collection on its
own now and then, on the thread that allocates: the loop's.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

from timerd import app, priority
from timerd.config import load


def _collections(n: int = 5) -> list[float]:
    out = []
    for _ in range(n):
        began = time.perf_counter()
        gc.collect()
        out.append(round((time.perf_counter() - began) * 1e3, 3))
    return out


async def _measure(home: Path) -> dict[str, object]:
    (home / "timerd.toml").write_text('[web]\nenabled = true\nport = 0\nhost = "127.0.0.1"\n'
                                      f'[state]\ndirectory = "{home / "state"}"\n'
                                      f'runtime_directory = "{home / "run"}"\n'
                                      f'[results]\npath = "{home / "results.jsonl"}"\n')
    config = load(home / "timerd.toml")
    async with contextlib.AsyncExitStack() as stack:
        await app.build(config, app.RunOptions(simulate=True), app.open_pins("mock"), stack)
        objects = len(gc.get_objects())
        before = _collections()
        priority.freeze_heap()
        after = _collections()
        gc.unfreeze()
    return {"tracked_objects": objects, "full_collection_ms_before_freeze": before,
            "full_collection_ms_after_freeze": after}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="timerd-gc-") as tmp:
        print(json.dumps(asyncio.run(_measure(Path(tmp))), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
