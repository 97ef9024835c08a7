"""XML bodies → plain dicts, through defusedxml only.

Upstream XML is untrusted: defusedxml refuses entity declarations (billion laughs, external
entities) and we report that as a PARSE error instead of expanding anything.

Mapping: an element with children becomes a dict of child tag → value; a tag that repeats becomes a
list; a leaf becomes its text ("" when empty). Attributes are ignored — none of the upstreams put
data there. Because a single ``<item>`` looks like a dict here, the projection wraps a dict found at
``record_path`` into a one-element list (see ``records_at``).
"""

from __future__ import annotations

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


def xml_to_dict(body: bytes) -> dict[str, Any]:
    try:
        root = fromstring(body, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise parse_error(f"hostile XML refused ({type(exc).__name__})") from exc
    except ParseError as exc:
        raise parse_error(f"malformed or truncated XML: {exc}") from exc
    except (ValueError, RecursionError) as exc:  # odd encodings, absurd nesting
        raise parse_error(f"unreadable XML: {exc}") from exc
    return {_tag(root): _convert(root)}
