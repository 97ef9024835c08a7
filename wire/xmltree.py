"""XML bodies → plain dicts, through defusedxml only.

Legacy Korean servers may still declare ``encoding="EUC-KR"``, which expat cannot read; such bodies
are re-encoded to UTF-8 (through CP949, EUC-KR's superset) before parsing.

Upstream XML is untrusted: defusedxml refuses entity declarations (billion laughs, external
entities) and we report that as a PARSE error instead of expanding anything.

Mapping: an element with children becomes a dict of child tag → value; a tag that repeats becomes a
list; a leaf becomes its text ("" when empty). Attributes are ignored — none of the upstreams put
data there. Because a single ``<item>`` looks like a dict here, the projection wraps a dict found at
``record_path`` into a one-element list (see ``records_at``).
"""

from __future__ import annotations

import re
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from .errors import parse_error


def _tag(el: Element) -> str:
    tag = el.tag if isinstance(el.tag, str) else str(el.tag)
    return tag.rsplit("}", 1)[-1]  # drop a namespace; no upstream needs it to tell fields apart


def _convert(el: Element) -> Any:
    children = list(el)
    if not children:
        return (el.text or "").strip()
    out: dict[str, Any] = {}
    for child in children:
        key = _tag(child)
        value = _convert(child)
        if key not in out:
            out[key] = value
        elif isinstance(out[key], list):  # only repetition makes lists (leaves are str, nodes dict)
            out[key].append(value)
        else:
            out[key] = [out[key], value]
    return out


_DECL_ENCODING = re.compile(rb"""^(\s*<\?xml[^>]*encoding\s*=\s*["'])([A-Za-z0-9._-]+)(["'])""")


def _undeclared_as_utf8(body: bytes, legacy_korean: bool) -> bytes:
    """No encoding in the prolog: expat assumes UTF-8. EUC-KR bytes (announced by the HTTP charset,
    or simply not valid UTF-8) are re-encoded, through CP949, with a prolog saying so."""
    if not legacy_korean:
        try:
            body.decode("utf-8")
            return body
        except UnicodeDecodeError:
            pass
    try:
        text = body.decode("cp949")
    except UnicodeDecodeError:
        return body  # neither: expat reports where it breaks
    text = re.sub(r"^\ufeff?\s*<\?xml[^>]*\?>", "", text)
    return b'<?xml version="1.0" encoding="UTF-8"?>' + text.encode("utf-8")


def _as_utf8(body: bytes, legacy_korean: bool = False) -> bytes:
    """expat cannot read multi-byte legacy encodings (EUC-KR); re-encode those to UTF-8 first."""
    m = _DECL_ENCODING.match(body[:200])
    if not m:
        return _undeclared_as_utf8(body, legacy_korean)
    if m.group(2).lower() in (b"utf-8", b"utf8", b"us-ascii", b"ascii", b"iso-8859-1"):
        return body
    name = m.group(2).decode("ascii").lower()
    codec = (
        "cp949" if name in ("euc-kr", "euckr", "ks_c_5601-1987", "cp949", "x-windows-949") else name
    )
    try:
        text = body[m.end() :].decode(codec)
    except (LookupError, UnicodeDecodeError) as exc:
        raise parse_error(f"XML declared as {name} but unreadable as such: {exc}") from exc
    return m.group(1) + b"UTF-8" + m.group(3) + text.encode("utf-8")


_ROOT_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)")


def _without_trailer(body: bytes) -> bytes | None:
    """A complete document followed by a trailer (a WAS banner, an HTML comment, NUL padding):
    the document up to its root's end tag, or None when there is no such end tag."""
    start = body.find(b"<", body.find(b"?>") + 2 if body.lstrip().startswith(b"<?") else 0)
    m = _ROOT_TAG.match(body, start) if start >= 0 else None
    if not m:
        return None
    end = body.rfind(b"</" + m.group(1) + b">")
    return body[: end + len(m.group(1)) + 3] if end > 0 else None


def xml_to_dict(body: bytes, *, legacy_korean: bool = False) -> dict[str, Any]:
    """``legacy_korean``: the HTTP Content-Type said EUC-KR; only matters when the prolog is silent."""
    body = _as_utf8(body.rstrip(b"\x00 \t\r\n"), legacy_korean)  # NUL padding after the document
    try:
        root = fromstring(body, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise parse_error(f"hostile XML refused ({type(exc).__name__})") from exc
    except ParseError as exc:
        trimmed = _without_trailer(body) if "junk after document element" in str(exc) else None
        if trimmed is None or len(trimmed) >= len(body):
            raise parse_error(f"malformed or truncated XML: {exc}") from exc
        return xml_to_dict(trimmed)  # shorter each time: ends
    except (ValueError, RecursionError) as exc:  # odd encodings, absurd nesting
        raise parse_error(f"unreadable XML: {exc}") from exc
    try:
        return {_tag(root): _convert(root)}
    except RecursionError as exc:
        raise parse_error("XML nested too deeply") from exc
