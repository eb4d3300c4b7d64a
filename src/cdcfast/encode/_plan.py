"""What the generators of every format share: the order of a synthetic stream's messages,
and the random values of the kinds every format has."""
from __future__ import annotations

import datetime as dt
import decimal
import struct

from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, FLOAT32, FLOAT64, INT8, INT16, INT32,
                       INT64, TIME64, TIMESTAMP, TIMESTAMP_TZ)

# the words and order states of generated text columns
WORDS = ("Smith", "Doe", "Green", "order", "ACME Corp", "delivery", "back door", "fragile",
         "call first", "Zurich", "Lyon", "N/A", "42", "x", "Main St.", "rush", "gift", "ok")
STATUS = ("NEW", "OPEN", "PICKED", "SHIPPED", "CLOSED", "RETURNED", "HOLD")

# The Db2 tables of ibm-delimited and lldf: columns after the INTEGER key, cycled to reach
# table_width: (name, Db2 type, nullable).
DB2_COLUMNS = (
    ("CUSTOMER_NAME", "VARCHAR(40)", True), ("AMOUNT", "DECIMAL(11,2)", True),
    ("ORDER_DATE", "DATE", True), ("CREATED_TS", "TIMESTAMP", False),
    ("STATUS", "CHAR(8)", True), ("QUANTITY", "SMALLINT", True), ("LINE_SEQ", "BIGINT", True),
    ("DISCOUNT_RATE", "DOUBLE", True), ("SHIP_TIME", "TIME", True),
    ("NOTES", "VARCHAR(200)", True), ("CUSTOMER_ID", "INTEGER", True),
    ("REGION_NO", "DECIMAL(5,0)", True), ("WEIGHT_KG", "REAL", True),
    ("TRACKING_ID", "VARCHAR(16) FOR BIT DATA", True), ("UPDATED_TS", "TIMESTAMP(3)", True),
    ("PRIORITY", "CHAR(1)", True), ("BALANCE", "DECIMAL(31,8)", True),
    ("EVENT_TSZ", "TIMESTAMP WITH TIME ZONE", True), ("GIFT_WRAP", "BOOLEAN", True),
)
DB2_INTL = "éüßñ中文€"       # their international characters, kept only where the code page has them

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


INTL = ("é", "ü", "ß", "ñ", "中文", "€", "Ωμέγα", "жук", "日本")
NEEDS_ESCAPE = ('"', "\\", "\n", "\t", "\x01", "\x1f", "\r")
EMOJI = ("😀", "🚀", "🎉", "𝄞")


def text_maker(rng, length: int):
    """Random text of up to `length` characters: words, international text, characters JSON
    must escape and non-BMP emoji (now and then empty)."""
    def text():
        if rng.random() < 0.03:
            return ""
        target = rng.randint(1, length)
        parts, size = [], 0
        while size < target:
            x = rng.random()
            if x < 0.05:
                piece = rng.choice(NEEDS_ESCAPE)
            elif x < 0.08:
                piece = rng.choice(EMOJI)
            elif x < 0.14:
                piece = rng.choice(INTL)
            else:
                piece = rng.choice(WORDS) + " "
            parts.append(piece)
            size += len(piece)
        return "".join(parts)[:target]
    return text


def char_maker(rng, n: int):
    """Random CHAR(n) values, blank-padded to their length: flags for n <= 2, else order
    states."""
    if n <= 2:
        return lambda: rng.choice("YNABCX").ljust(n)
    return lambda: rng.choice(STATUS).ljust(n)[:n]


_BITS = {INT8: 8, INT16: 16, INT32: 32, INT64: 64}


def kind_maker(rng, ctype, digits: int | None = None):
    """() -> random values of a catalog column type, each exactly what a decoder gives back
    (REAL values float32; TIME and TIMESTAMP at `digits` fraction digits, by default the
    type's precision), for the kinds every format writes alike: integers, DECIMAL, REAL,
    DOUBLE, BOOLEAN, binary, DATE (1940..2035: a third before 1970), TIME, TIMESTAMP (from
    1965: a few before the epoch), TIMESTAMP WITH TIME ZONE (from 2000). None for text and
    exact-text kinds, which each format makes its own way."""
    kind = ctype.kind
    p = ctype.precision if digits is None else digits
    if kind in _BITS:
        return integer_maker(rng, _BITS[kind])
    if kind == DECIMAL:
        return decimal_maker(rng, ctype.precision, ctype.scale)
    if kind == FLOAT64:
        return double_maker(rng)
    if kind == FLOAT32:
        return lambda: float32(round(rng.uniform(0, 1000), 3) if rng.random() < 0.8
                               else rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30))
    if kind == BOOL:
        return lambda: rng.random() < 0.5
    if kind == BINARY:
        return lambda: rng.randbytes(rng.randint(1, ctype.length or 16))
    if kind == DATE32:
        return lambda: dt.date(1940, 1, 1) + dt.timedelta(days=rng.randint(0, 34698))
    if kind == TIME64:
        return lambda: dt.time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59),
                               truncate_us(rng.randint(0, 999999), p))
    if kind in (TIMESTAMP, TIMESTAMP_TZ):
        base = dt.datetime(1965, 1, 1) if kind == TIMESTAMP else \
            dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
        return lambda: base + dt.timedelta(seconds=rng.randint(0, 2 * 10 ** 9),
                                           microseconds=truncate_us(rng.randint(0, 999999), p))
    return None


def float32(x: float) -> float:
    """x rounded to the nearest float32."""
    return struct.unpack("f", struct.pack("f", x))[0]


def truncate_us(us: int, precision: int) -> int:
    """Drop the digits a TIME(p)/TIMESTAMP(p) column cannot hold, so values round-trip."""
    return us - us % 10 ** (6 - precision) if precision < 6 else us


class LiveRows:
    """The live rows of each table of a generated stream, so that updates and deletes act on
    rows that exist: per table its keys in a list (a random one in O(1), removed by
    swap-pop) and key -> row. `makers`: per table name, one value maker per column; column
    0 is the key `ID`, numbered from 1001 up by 1 to 3 (`key_value` turns the number into
    the column's value)."""

    def __init__(self, rng, makers: dict, key_value=int):
        self.rng, self.makers, self.key_value = rng, makers, key_value
        self.keys = {name: [] for name in makers}
        self.rows = {name: {} for name in makers}
        self.next_key = dict.fromkeys(makers, 1001)

    def count(self, t) -> int:
        return len(self.keys[t.name])

    def insert(self, t) -> dict:
        key = self.next_key[t.name]
        self.next_key[t.name] += self.rng.randint(1, 3)
        row = {c.name: m() for c, m in zip(t.columns, self.makers[t.name])}
        row[t.columns[0].name] = self.key_value(key)
        self.keys[t.name].append(key)
        self.rows[t.name][key] = row
        return row

    def update(self, t, most: int) -> tuple:
        """(before, after) of a live row with 1..most of its non-key columns given new
        values."""
        r = self.rng
        key = r.choice(self.keys[t.name])
        before = self.rows[t.name][key]
        after = dict(before)
        makers = self.makers[t.name]
        for i in r.sample(range(1, len(t.columns)), min(r.randint(1, most), len(t.columns) - 1)):
            after[t.columns[i].name] = makers[i]()
        self.rows[t.name][key] = after
        return before, after

    def delete(self, t) -> dict:
        """A live row, no longer live."""
        keys = self.keys[t.name]
        i = self.rng.randrange(len(keys))
        keys[i], keys[-1] = keys[-1], keys[i]
        return self.rows[t.name].pop(keys.pop())


def random_change(rng, tables, live: LiveRows, most: int = 5) -> tuple:
    """(op, table, before, after) of a random change to one of `tables`' live rows: a quarter
    inserts (all of them while the table is empty), mostly updates of 1..`most` columns,
    else deletes."""
    t = rng.choice(tables)
    x = rng.random()
    if x < 0.25 or not live.count(t):
        return "c", t, None, live.insert(t)
    if x < 0.88:
        return ("u", t) + live.update(t, most)
    return "d", t, live.delete(t), None
