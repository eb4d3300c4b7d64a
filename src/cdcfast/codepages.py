"""Single-byte code pages as 256-entry tables, shared by every format.

Python's codecs know cp037, cp500, cp1140 and cp273 but not cp1047; its table here is IBM's
published one (CDRA, ibm-1047_P100-1995): cp037 with six code points moved (`[`, `]`, `^`, `¬`,
`Ý`, `¨`). X'15' is NEL and X'25' is LF in both, which is why the delimited format's record
delimiter is X'25' in every EBCDIC code page (SPEC §5.1).
"""
from __future__ import annotations

from functools import lru_cache

EBCDIC = ("cp037", "cp1047", "cp500", "cp1140", "cp273")
ASCII_COMPATIBLE = ("utf-8", "ascii", "latin-1")
_ALIASES = {"utf8": "utf-8", "utf-8": "utf-8", "ascii": "ascii", "us-ascii": "ascii",
            "latin-1": "latin-1", "latin1": "latin-1", "iso-8859-1": "latin-1",
            "cp037": "cp037", "ibm037": "cp037", "cp1047": "cp1047", "ibm1047": "cp1047",
            "cp500": "cp500", "ibm500": "cp500", "cp1140": "cp1140", "ibm1140": "cp1140",
            "cp273": "cp273", "ibm273": "cp273"}

_CP1047_FROM_CP037 = {0x5F: "^", 0xAD: "[", 0xB0: "¬", 0xBA: "Ý", 0xBB: "¨", 0xBD: "]"}


def canonical(name: str) -> str:
    """The canonical name of a supported encoding; ValueError for any other."""
    key = str(name).strip().lower().replace("_", "-")
    if key not in _ALIASES:
        raise ValueError(f"unsupported encoding {name!r} (use one of: utf-8, ascii, latin-1, "
                         f"{', '.join(EBCDIC)})")
    return _ALIASES[key]


@lru_cache(maxsize=None)
def decoding_table(encoding: str) -> str:
    """The 256 characters that bytes 0..255 stand for (single-byte encodings only)."""
    enc = canonical(encoding)
    if enc == "utf-8":
        raise ValueError("utf-8 is not a single-byte code page")
    if enc == "ascii":
        return "".join(chr(i) if i < 128 else "\ufffd" for i in range(256))
    if enc == "cp1047":
        base = list(bytes(range(256)).decode("cp037"))
        for b, ch in _CP1047_FROM_CP037.items():
            base[b] = ch
        return "".join(base)
    return bytes(range(256)).decode(enc)


@lru_cache(maxsize=None)
def _encoding_map(encoding: str) -> dict:
    return {ch: i for i, ch in enumerate(decoding_table(encoding)) if ch != "\ufffd"}


def decode_bytes(data: bytes, encoding: str) -> str:
    """Decode with any supported encoding (strict for utf-8 and ascii)."""
    enc = canonical(encoding)
    if enc in ("utf-8", "ascii"):
        return bytes(data).decode(enc)
    if enc == "cp1047":
        table = decoding_table(enc)
        return "".join(table[b] for b in bytes(data))
    return bytes(data).decode(enc)


def encode_text(text: str, encoding: str) -> bytes:
    """Encode with any supported encoding; a character the code page lacks is a ValueError."""
    enc = canonical(encoding)
    if enc != "cp1047":
        return text.encode(enc)
    m = _encoding_map(enc)
    try:
        return bytes(m[ch] for ch in text)
    except KeyError as e:
        raise ValueError(f"character {e.args[0]!r} is not in cp1047") from None


@lru_cache(maxsize=None)
def utf8_table(encoding: str) -> tuple[bytes, bytes]:
    """For the kernels: byte → its UTF-8 bytes, as (256×4 bytes, 256 lengths)."""
    table = decoding_table(encoding)
    out = bytearray(256 * 4)
    lens = bytearray(256)
    for i, ch in enumerate(table):
        if ch == "\ufffd":
            continue                # not defined in the code page: length 0 marks an error
        u = ch.encode("utf-8")
        out[i * 4:i * 4 + len(u)] = u
        lens[i] = len(u)
    return bytes(out), bytes(lens)


@lru_cache(maxsize=None)
def ascii_table(encoding: str) -> bytes:
    """For the kernels: byte → its ASCII byte (0 when the byte is not ASCII in the code page).

    Numbers, dates and hex text are parsed through this table, so one parser serves every code
    page; 0 is never a valid character of such text, so a non-ASCII byte fails the parse.
    """
    if canonical(encoding) == "utf-8":
        return bytes(i if i < 128 else 0 for i in range(256))
    table = decoding_table(encoding)
    return bytes(ord(ch) if ord(ch) < 128 else 0 for ch in table)
