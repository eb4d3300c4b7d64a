"""The vendor documents' own examples, decoded and applied: the IBM Q Replication employee
sample (seeds/ibm-qrep-event-publishing-delimited.txt, as tests/test_ibm_reference.py holds
it) and a Qlik UPDATE whose columnMask sends two of six columns (the data message of
seeds/qlik-replicate-data-messages.txt, as tests/test_qlik_decode.py builds it)."""
from __future__ import annotations

import datetime as dt
import decimal

import cdcfast
from test_ibm_reference import EMPLOYEE, SEED_FIXED
from test_qlik_decode import EMP, line, pubsub

D = decimal.Decimal
NAMES = ["FIRST_NAME", "LAST_NAME"]


def test_the_ibm_employee_sample_applied():
    """An insert of John Doe, then an update of Ed Smith (a key the log never inserted: an
    update of a key without a row writes it); the update of Bill Green carries the seed's
    commit time 18.05.67, not a time: an error row, never applied."""
    events = cdcfast.decode(SEED_FIXED, format="ibm-delimited", catalog=EMPLOYEE)
    app = cdcfast.Applier(key=NAMES)
    state = app.apply(events)
    got = {(r["FIRST_NAME"], r["LAST_NAME"]): (r["POSITION"], r["SALARY"], r["COMMISSION"])
           for r in state.to_pylist()}
    assert got == {("John", "Doe"): ("MGR", D("120000.00"), D("12000.00")),
                   ("Ed", "Smith"): ("SALESREP", D("150000.00"), D("15000.00"))}
    assert (app.last_stats["applied"], app.last_stats["skipped_errors"]) == (2, 1)
    assert app.apply(events, target=state).equals(state)
    assert app.last_stats["replays"] == 2
    hist = cdcfast.apply_changes(events, key=NAMES, scd=2).to_pylist()
    assert [(r["FIRST_NAME"], r["__start_at"], r["__end_at"]) for r in hist] == [
        ("John", dt.datetime(2006, 6, 30, 18, 0, 52, tzinfo=dt.timezone.utc), None),
        ("Ed", dt.datetime(2006, 6, 30, 18, 1, 2, tzinfo=dt.timezone.utc), None)]
    net = cdcfast.net_changes(events, key=NAMES).to_pylist()
    assert [r["op"] for r in net] == ["c", "u"]


def test_a_qlik_update_with_its_column_mask_keeps_what_it_does_not_send():
    ins = pubsub("INSERT", changeMask="3F", columnMask="3F",
                 changeSequence="20230911032325000000000000000000005")
    up = pubsub("UPDATE", data={"ID": "7", "NAME": "Bo"}, changeMask="02", columnMask="03",
                changeSequence="20230911032326000000000000000000006")
    events = cdcfast.decode(line(up, ins), format="qlik", catalog=EMP)   # out of order
    assert events.column("present").to_pylist()[0]["SALARY"] is False
    state = cdcfast.apply_changes(events)                   # the key from the catalog
    assert state.to_pylist() == [{"ID": 7, "NAME": "Bo", "SALARY": D("1200.50"), "QTY": 3,
                                  "NOTES": "x", "HIRED": dt.date(2020, 2, 29)}]
    net = cdcfast.net_changes(events).to_pylist()
    assert len(net) == 1 and net[0]["op"] == "u"
    assert net[0]["after"]["SALARY"] == D("1200.50") and net[0]["present"]["SALARY"]
    hist = cdcfast.apply_changes(events, scd=2, track=["SALARY"]).to_pylist()
    assert len(hist) == 1 and hist[0]["NAME"] == "Bo"      # NAME is not tracked: in place
    hist = cdcfast.apply_changes(events, scd=2).to_pylist()
    assert [r["NAME"] for r in hist] == ["Ann", "Bo"]
