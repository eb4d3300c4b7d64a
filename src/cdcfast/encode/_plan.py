"""What the generators of every format share: the order of a synthetic stream's messages."""
from __future__ import annotations

FRESH_ROWS = 5000        # up to this many rows every record is freshly random; beyond, the
#                          first FRESH_ROWS rows are the pool whose transactions are re-sampled


def message_range(records_per_message) -> tuple[int, int]:
    """records_per_message as an inclusive (lo, hi) range (an int is lo = hi)."""
    if isinstance(records_per_message, int):
        records_per_message = (records_per_message, records_per_message)
    lo, hi = records_per_message
    if not 1 <= lo <= hi:
        raise ValueError("records_per_message must be a range 1 <= lo <= hi")
    return lo, hi


def plan(transaction, rows: int, lo: int, hi: int, rng) -> list:
    """Messages (lists of events) in output order: `transaction(left, lo, hi)` makes one
    transaction (a list of messages) of at most `left` records, fresh up to FRESH_ROWS rows;
    beyond, whole pooled transactions are re-sampled (the same objects: an encoder that
    caches by identity writes each once), so 100 MB take seconds."""
    transactions = []
    left = min(rows, FRESH_ROWS)
    while left > 0:
        txn = transaction(left, lo, hi)
        left -= sum(map(len, txn))
        transactions.append(txn)
    out = [msg for txn in transactions for msg in txn]
    left = rows - min(rows, FRESH_ROWS)
    while left > 0:
        for msg in rng.choice(transactions):
            if left <= 0:
                break
            msg = msg if len(msg) <= left else msg[:left]
            out.append(msg)
            left -= len(msg)
    return out
