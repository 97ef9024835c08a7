"""A hostile upstream's compressed body (each failed before its fix).

httpx inflates every received chunk whole and chains every coding the upstream lists, so the
20 MB body limit was checked only after a gzip (or ``gzip, gzip``) bomb had been inflated in
memory. Now the dispatcher inflates itself, bounded, one coding at most."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

from tests.dispatch.test_dispatch_live import ARGS, ER, ER_PATH, ROWS, dispatcher, srv  # noqa: F401
from tests.dispatch.helpers import run
from tests.support.upstreams import XML, Reply, data_go_kr_xml

ZEROS = 30 * 1024 * 1024  # inflates to 30 MB; sent as ~30 KB (gzip) or ~100 bytes (gzip, gzip)


def _call(srv, tmp_path, body: bytes, encoding: str, limit: int = 10_000):  # noqa: F811
    srv.route(ER_PATH, Reply(body=body, content_type=XML, headers={"Content-Encoding": encoding}))
    return run(dispatcher(srv, ER, tmp_path=tmp_path, max_body_bytes=limit).call("er_test", ARGS, mode="live"))


def test_a_gzip_bomb_is_refused_without_inflating_it(srv, tmp_path) -> None:  # noqa: F811
    for encoding, body in (("gzip", gzip.compress(b"\0" * ZEROS)),
                           ("gzip, gzip", gzip.compress(gzip.compress(b"\0" * ZEROS)))):
        tracemalloc.start()
        try:
            out = _call(srv, tmp_path, body, encoding)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert (out.error_class, out.error_code) == ("adapter_error", "PARSE"), (encoding, out)
        assert peak < 8 * 1024 * 1024, f"{encoding}: {peak:,} bytes at peak for a 10 KB limit"


def test_unknown_or_stacked_codings_are_parse_errors(srv, tmp_path) -> None:  # noqa: F811
    xml = data_go_kr_xml(ROWS)
    for encoding, body in (("br", xml), ("compress", xml), ("gzip, gzip", gzip.compress(gzip.compress(xml))),
                           ("gzip", b"not gzip at all")):
        out = _call(srv, tmp_path, body, encoding, limit=1_000_000)
        assert (out.error_class, out.error_code) == ("adapter_error", "PARSE"), (encoding, out)


def test_ordinary_compressed_bodies_still_work(srv, tmp_path) -> None:  # noqa: F811
    xml = data_go_kr_xml(ROWS)
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    for encoding, body in (("gzip", gzip.compress(xml)), ("deflate", zlib.compress(xml)),
                           ("deflate", raw_deflate.compress(xml) + raw_deflate.flush()),
                           ("identity", xml)):
        out = _call(srv, tmp_path, body, encoding, limit=1_000_000)
        assert out.error_class is None, (encoding, out.error_message)
        assert out.status == "ok" and "동아대학교병원" in str(out.output), (encoding, out)
