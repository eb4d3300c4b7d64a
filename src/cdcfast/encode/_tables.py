"""Tables an encoder's catalog lacks, typed from the events' values (Debezium, OLR and Qlik
Replicate write events of tables no catalog names)."""
from __future__ import annotations

import datetime as dt
import decimal

from ..catalog import DECIMAL, Column, ColumnType, Table, parse_type

DATA_OPS = ("c", "u", "d", "r", "t", "m")


def infer_tables(events, catalog) -> dict:
    """Tables the catalog lacks, typed from their values: str VARCHAR, bool BOOLEAN, int
    BIGINT, float DOUBLE, Decimal DECIMAL (largest scale seen), bytes VARBINARY, aware datetime
    TIMESTAMP WITH TIME ZONE, naive datetime TIMESTAMP(6), date DATE, time TIME(6); all null:
    VARCHAR. Columns in the order first met."""
    found = {}
    for ev in events:
        if ev.get("op") not in DATA_OPS or not ev.get("table"):
            continue
        schema, table = ev.get("schema"), ev.get("table")
        name = f"{schema}.{table}" if schema else table
        if catalog is not None and catalog.get(name) is not None:
            continue
        cols = found.setdefault(name, (schema, table, {}))[2]
        for image in (ev.get("before"), ev.get("after")):
            for col, v in (image or {}).items():
                info = cols.setdefault(col, [None, 0, 0])
                if v is None:
                    continue
                if info[0] is None:
                    info[0] = python_kind(v)
                if isinstance(v, decimal.Decimal) and v.is_finite():
                    _, digits, exp = v.as_tuple()
                    info[1] = max(info[1], -exp)
                    info[2] = max(info[2], len(digits) + exp)
    out = {}
    for name, (schema, table, cols) in found.items():
        columns = []
        for col, (type_text, scale, whole) in cols.items():
            if type_text == "DECIMAL":
                p = max(1, whole + scale)
                ctype = ColumnType(f"DECIMAL({p},{scale})", "DECIMAL", DECIMAL, precision=p,
                                   scale=scale)
            else:
                ctype = parse_type(type_text or "VARCHAR")
            columns.append(Column(col, ctype))
        out[name] = Table(schema, table, tuple(columns))
    return out


def python_kind(v):
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT"
    if isinstance(v, float):
        return "DOUBLE"
    if isinstance(v, decimal.Decimal):
        return "DECIMAL"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "VARBINARY"
    if isinstance(v, dt.datetime):
        return "TIMESTAMP WITH TIME ZONE" if v.tzinfo is not None else "TIMESTAMP(6)"
    if isinstance(v, dt.date):
        return "DATE"
    if isinstance(v, dt.time):
        return "TIME(6)"
    return "VARCHAR"
