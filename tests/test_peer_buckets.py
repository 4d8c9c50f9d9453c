"""`limits.PeerBuckets`: a connection rate per address (the web server's flood guard), in
bounded memory."""

from __future__ import annotations

from timerd.limits import PeerBuckets


def test_each_peer_has_its_own_burst_then_rate() -> None:
    buckets = PeerBuckets(rate_per_s=2.0, burst=3)
    assert [buckets.take("a", 0.0) for _ in range(4)] == [True, True, True, False]
    assert buckets.take("b", 0.0)  # another address is not held by the first
    assert buckets.take("a", 0.5)  # half a second at 2 a second: one more
    assert not buckets.take("a", 0.5)


def test_a_scan_from_many_addresses_is_remembered_in_bounded_memory() -> None:
    buckets = PeerBuckets(rate_per_s=1.0, burst=1, max_peers=2)
    assert buckets.take("a", 0.0)
    assert not buckets.take("a", 0.0)
    buckets.take("b", 0.0)
    buckets.take("c", 0.0)  # "a", seen longest ago, is forgotten...
    assert len(buckets._buckets) == 2
    assert buckets.take("a", 0.0)  # ...and starts again with a full burst
