"""What the generators of every format share: the order of a synthetic stream's messages,
and the random values of the kinds every format has."""
from __future__ import annotations

import decimal

# the words and order states of generated text columns
WORDS = ("Smith", "Doe", "Green", "order", "ACME Corp", "delivery", "back door", "fragile",
         "call first", "Zurich", "Lyon", "N/A", "42", "x", "Main St.", "rush", "gift", "ok")
STATUS = ("NEW", "OPEN", "PICKED", "SHIPPED", "CLOSED", "RETURNED", "HOLD")

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


def integer_maker(rng, bits: int):
    """Random signed integers of `bits` bits (sign included): the range's ends now and then,
    else anywhere in it or small and positive (ids, counts)."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def integer():
        x = rng.random()
        if x < 0.04:
            return lo if x < 0.02 else hi     # the range's ends
        return rng.randint(lo, hi) if x < 0.5 else rng.randint(0, min(hi, 99999))
    return integer


def decimal_maker(rng, precision: int, scale: int):
    """Random DECIMAL(precision, scale) values, of any number of digits, a tenth negative."""
    def dec():
        digits = rng.randint(1, precision)
        n = rng.randint(0, 10 ** digits - 1) * (-1 if rng.random() < 0.1 else 1)
        return decimal.Decimal(f"{n}E-{scale}")   # exact at any precision
    return dec


def double_maker(rng):
    """Random doubles: mostly amounts with cents, else any magnitude from 1e-20 to 1e20 (all
    exact in HFP's 56-bit fraction too)."""
    return lambda: (round(rng.uniform(0, 1e5), 2) if rng.random() < 0.7
                    else rng.uniform(-1, 1) * 10.0 ** rng.randint(-20, 20))


def nullable_maker(rng, make, nullable: bool, share: float):
    """`make`, or None a `share` of the time when the column is nullable."""
    if not nullable:
        return make
    return lambda: None if rng.random() < share else make()
