"""pytezos 3.20's side of the client round-trip benchmark (bench_roundtrip.mjs runs it; BENCHMARKS.md).

One round: `transaction(...).send(min_confirmations=1)` of 1 tez from bootstrap1 to bootstrap2.

Usage:
  python3 bench_roundtrip.py record <url> <rounds>
      runs the rounds against <url> (the recording proxy), calling GET <url>/__round before each
      so the proxy knows where a round starts.
  python3 bench_roundtrip.py time <url a> <url b> <rounds>
      one warm-up round on each, then <rounds> rounds on each, alternating a, b; prints one JSON
      object with each side's times in milliseconds.
"""

import json
import sys
import time
import urllib.request
from decimal import Decimal

from pytezos import pytezos

BOOTSTRAP1 = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh"
BOOTSTRAP2 = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN"


def round_trip(client):
    """One transfer and its first confirmation; returns the elapsed milliseconds."""
    started = time.perf_counter()
    client.transaction(destination=BOOTSTRAP2, amount=Decimal(1)).send(min_confirmations=1)
    return (time.perf_counter() - started) * 1000


def main():
    mode = sys.argv[1]
    if mode == "record":
        url, rounds = sys.argv[2], int(sys.argv[3])
        client = pytezos.using(shell=url, key=BOOTSTRAP1)
        for _ in range(rounds):
            urllib.request.urlopen(url + "/__round").read()
            round_trip(client)
        return
    url_a, url_b, rounds = sys.argv[2], sys.argv[3], int(sys.argv[4])
    clients = [pytezos.using(shell=url, key=BOOTSTRAP1) for url in (url_a, url_b)]
    for client in clients:
        round_trip(client)
    times = [[], []]
    for _ in range(rounds):
        for side, client in enumerate(clients):
            times[side].append(round_trip(client))
    print(json.dumps({"a_ms": times[0], "b_ms": times[1]}))


main()
