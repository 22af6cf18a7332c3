"""The text encoding of a CSV export (docs/input.md, "Encodings").

Excel and HubSpot save CSV files as UTF-8 (with or without a byte-order mark), as
UTF-16 with a byte-order mark (Excel's "Unicode text", tab-separated), or in the
legacy Windows code page, cp1252 (Excel's plain "CSV" on a Western European or US
Windows). Unless CSV_ENCODING states one, the encoding is detected: the byte-order
mark, else UTF-8 if every byte of the file is UTF-8, else cp1252. cp1252 leaves five
bytes undefined (0x81, 0x8d, 0x8f, 0x90, 0x9d): a file holding one of them outside
UTF-8 is text in none of these encodings, and its error names the line and column.

The file is checked in chunks, so it is never held as text here."""

from __future__ import annotations

import codecs

AUTO = "auto"
FALLBACK = "cp1252"
_CHUNK = 1 << 20
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),  # Python's utf-16 reads the mark and drops it
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_LABELS = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "utf-16": "UTF-16", "cp1252": "Windows-1252"}
_ADVICE = 'save it from Excel as "CSV UTF-8", or set CSV_ENCODING to the encoding it is in'


class Undecodable(ValueError):
    """The file is not text in the encoding read; the message starts with the line and
    column of the first byte that is not ("line 3, column 9: ...")."""


def check_encoding(name: str) -> str:
    """`name` as a stated encoding: "auto", or a text encoding Python knows ("utf-8",
    "utf-16", "cp1252", "latin-1", ...), lower-cased. Raises ValueError."""
    name = name.strip().lower()
    if name == AUTO:
        return name
    try:
        b"a".decode(name)  # refuses unknown names and bytes-to-bytes codecs (base64)
    except UnicodeDecodeError:
        pass  # a text encoding that wants more than one byte (utf-16)
    except LookupError:
        raise ValueError(f'"{name}" is not a text encoding: use auto, utf-8, cp1252, ...') from None
    return name


def csv_codec(data: bytes, stated: str = AUTO) -> str:
    """The codec to read `data` with: `stated` unless it is "auto", else the one its
    byte-order mark names, else UTF-8 if all of it is UTF-8, else cp1252. Raises
    Undecodable when the file is not text in that codec."""
    stated = check_encoding(stated)
    bom = next((codec for mark, codec in _BOMS if data[: len(mark)] == mark), None)
    if stated != AUTO:
        codec = _with_bom(codecs.lookup(stated).name, bom)
        _check(data, codec, f"{_label(codec)} text, the encoding CSV_ENCODING states")
        return codec
    if bom:
        _check(data, bom, f"{_label(bom)} text, as its byte-order mark says")
        return bom
    utf8 = _first_error(data, "utf-8")
    if utf8 is None:
        return "utf-8"
    # Not UTF-8 in one place: a legacy Excel file, whose bytes are cp1252's characters.
    fallback = _first_error(data, FALLBACK)
    if fallback is not None:
        where = _where(data, fallback, FALLBACK)
        first = "" if fallback == utf8 else f"; UTF-8 fails first at {_where(data, utf8, 'utf-8')}"
        raise Undecodable(
            f"{where}: byte 0x{data[fallback]:02x} is not text in UTF-8 or in Windows-1252 "
            f"(cp1252), the encodings tried{first}; {_ADVICE}"
        )
    return FALLBACK


def _with_bom(codec: str, bom: str | None) -> str:
    """A stated UTF-8 or UTF-16 drops the file's byte-order mark, as detection does."""
    if codec == "utf-8":
        return "utf-8-sig"
    if codec.startswith("utf-16") and bom == "utf-16":
        return "utf-16"
    return codec


def _check(data: bytes, codec: str, expected: str) -> None:
    position = _first_error(data, codec)
    if position is not None:
        raise Undecodable(
            f"{_where(data, position, codec)}: byte 0x{data[position]:02x} is not "
            f"{expected}; {_ADVICE}"
        )


def _first_error(data: bytes, codec: str) -> int | None:
    """The position of the first byte `codec` cannot read, or None."""
    decoder = codecs.getincrementaldecoder(codec)("strict")
    view = memoryview(data)
    end = 0
    try:
        for start in range(0, len(data), _CHUNK):
            chunk = view[start : start + _CHUNK]
            end = start + len(chunk)
            decoder.decode(chunk)
        end = len(data)
        decoder.decode(b"", final=True)  # a sequence cut off at the end
    except UnicodeDecodeError as error:
        # error.object is what the decoder held (bytes left from the last chunk, less a
        # dropped byte-order mark) and this chunk: it ends where the chunk ends.
        return end - len(error.object) + error.start
    finally:
        view.release()
    return None


def _where(data: bytes, position: int, codec: str) -> str:
    """'line 3, column 9' of the byte at `position`: lines counted from 1 by their line
    feeds, the column in characters from 1."""
    if _ascii_compatible(codec):
        line_start = data.rfind(b"\n", 0, position) + 1
        line = data.count(b"\n", 0, position) + 1
        before = data[line_start:position].decode(codec, "replace")
        if line == 1:
            before = before.removeprefix("\ufeff")
    else:  # UTF-16: a line feed is two bytes; the text before it is decoded to count
        text = data[:position].decode(codec, "replace")
        line = text.count("\n") + 1
        before = text[text.rfind("\n") + 1 :]
    return f"line {line:,}, column {len(before) + 1:,}"


def _ascii_compatible(codec: str) -> bool:
    try:
        return b"\n".decode(codec) == "\n"
    except UnicodeDecodeError:
        return False


def _label(codec: str) -> str:
    return _LABELS.get(codec, codec)
