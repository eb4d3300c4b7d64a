#!/usr/bin/env python
"""Catalog.from_debezium / from_olr / from_qlik over hostile messages: nothing but a
ValueError escapes; a catalog they build round-trips through to_dict / from_dict and JSON; and
the messages decode with it, natively exactly as the reference decodes them (the kernels meet
the odd types, names and widths such catalogs hold), with well-formed error rows.

Input: byte 0 bits 0-1 the builder (debezium, olr, qlik), bit 2 the form (a stream; a list of
messages, framed as fuzz/harness.py says), bit 3 a pyarrow array of the messages for the
decode; the rest the messages."""
import json

import pyarrow as pa

import harness
import cdcfast
from cdcfast import Catalog
from jsonfuzz import difference, run, validated

Finding = harness.Finding
BUILDERS = (("debezium", Catalog.from_debezium), ("olr", Catalog.from_olr),
            ("qlik", Catalog.from_qlik))


def check(data: bytes) -> None:
    b0 = data[0] if data else 0
    fmt, build = BUILDERS[(b0 & 3) % 3]
    payload = data[1:]
    messages = harness.frames(payload) if b0 & 4 else [payload]
    src = list(messages) if b0 & 4 else payload
    try:
        cat = build(src)
    except ValueError:
        return
    d = cat.to_dict()
    again = Catalog.from_dict(json.loads(json.dumps(d)))
    if again.to_dict() != d:
        raise Finding(f"Catalog.from_{fmt}: {d} does not round-trip: {again.to_dict()}")
    if not cat.tables:
        return
    source = pa.array(messages, pa.binary()) if b0 & 8 and b0 & 4 else src
    got = {n: run(lambda m=m: m.Decoder(fmt, catalog=cat).decode_tables(source))
           for n, m in (("native", cdcfast), ("reference", cdcfast.reference))}
    if got["native"][0] == "raised":
        raise Finding(f"decode_tables with the built catalog raised "
                      f"{type(got['native'][1]).__name__}: {got['native'][1]}")
    validated(got["native"][1])
    harness.check_errors(got["native"][1], messages)
    diff = difference(got["native"], got["reference"], f"{fmt} with Catalog.from_{fmt}")
    if diff is not None:
        raise Finding(diff)


class Target:
    check = staticmethod(check)

    @staticmethod
    def seeds():
        from cdcfast.encode import generate
        for i, (fmt, opts) in enumerate([("debezium", {"schemas": True}),
                                         ("olr", {"columns": True, "full": True}),
                                         ("qlik", {})]):
            msgs, _ = generate(fmt, 6, table_width=5, seed=i, tables=2, messages=True, **opts)
            yield bytes([i]) + b"\n".join(m for m in msgs if m is not None)
            yield bytes([i | 4 | 8]) + harness.framed(msgs)


TARGET = Target()

if __name__ == "__main__":
    harness.main(TARGET)
