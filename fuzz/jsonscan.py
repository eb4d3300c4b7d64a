#!/usr/bin/env python
"""The strict JSON scanner of native/cdcfast/_json.h (cdcfast._json, the kernels' own) against
its twin cdcfast.reference._jsonscan and against Python: one document from any start, the
whole buffer (accepted exactly when json.loads accepts it), a string's end, the first invalid
UTF-8 byte, unescaping and base64.

Input: byte 0 the function (mod 6), byte 1 a start/position (mod the length + 1), the rest
the bytes scanned."""
import json

import harness
import test_json_scan as t
from cdcfast import _json as native
from cdcfast.reference import _jsonscan as ref

Finding = harness.Finding


def _same(what, got, want, data):
    if got != want:
        raise Finding(f"{what}({data!r}): native {got!r}, reference {want!r}")


def check(data: bytes) -> None:
    fn = data[0] % 6 if data else 0
    body = data[2:]
    pos = (data[1] if len(data) > 1 else 0) % (len(body) + 1)
    if fn in (0, 1):
        whole = fn == 1
        got = native.document(body, pos, whole)
        _same("document", got, ref.document(body, pos, whole=whole), body)
        end, code, err = got
        if code == 0 and not pos < end <= len(body):
            raise Finding(f"document({body!r}, {pos}): accepted, but ends at {end}")
        if code != 0 and not pos <= err <= len(body):
            raise Finding(f"document({body!r}, {pos}): error at {err}, outside the input")
        if whole and pos == 0 and (code == 0) != t.python_accepts(body):
            raise Finding(f"document({body!r}, whole): code {code}, json.loads "
                          f"{'accepts' if t.python_accepts(body) else 'rejects'} it")
    elif fn == 2:
        if pos < len(body):
            t.check_string(body, pos)
    elif fn == 3:
        _same("utf8_first_invalid", native.utf8_first_invalid(body),
              ref.utf8_first_invalid(body), body)
        try:
            body.decode("utf-8")
            python = -1
        except UnicodeDecodeError as e:
            python = e.start
        _same("utf8_first_invalid (Python)", native.utf8_first_invalid(body), python, body)
    elif fn == 4:
        if native.string_end(body + b'"', 0)[2] != 0:
            return                          # unescape reads only what the scan passed
        got = native.unescape(body)
        try:
            # (json.loads decodes bytes with surrogatepass: a surrogate's raw UTF-8 form
            # would pass it as if escaped)
            body.decode("utf-8")
            value = json.loads(b'"' + body + b'"')
        except (ValueError, UnicodeDecodeError):
            return                          # not UTF-8: the scan checks that elsewhere
        try:
            want = value.encode("utf-8")
        except UnicodeEncodeError:          # a lone surrogate: where its escape begins
            if not (isinstance(got, int) and got < 0 and body[-1 - got:][:2] == b"\\u"):
                raise Finding(f"unescape({body!r}): {got!r}, but it holds a lone surrogate")
            return
        _same("unescape", got, want, body)
    else:
        got = native.base64_decode(body)
        _same("base64_decode", got, ref.base64_decode(body), body)
        if not t.PY_PADDING_QUIRK and not t.excess_padding(body):
            _same("base64_decode (Python)", got, t.python_b64(body), body)


class Target:
    check = staticmethod(check)

    @staticmethod
    def seeds():
        docs = [b'{"a":1}', b' [1, 2.5e-3, -0, "x", true, false, null, {}] ', b'"\\ud800"',
                b'{"k":"\\u00e9\\n\\"","n":[[[]]],"x":-1.5E+3}', b"[" * 40 + b"]" * 40,
                b'{"a":"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"}\n{"b":2}']
        for fn in range(6):
            for d in docs:
                yield bytes([fn, 0]) + d
        for b in (b"AQID", b"AQ==", b"AAB=", b"aGVsbG8gd29ybGQ"):
            yield bytes([5, 0]) + b
        for s in (b'abc\\n\\u00e9\\ud83d\\ude00', b"\\ud800x", b"a\\\\b"):
            yield bytes([4, 0]) + s


TARGET = Target()

if __name__ == "__main__":
    harness.main(TARGET)
