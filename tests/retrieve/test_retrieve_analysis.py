"""Korean analysis: the same word splits the same way in a query and in a document."""

from ummaya.model.analysis import Segmenter, grams, morphs


def test_grams_split_seunghak_identically_alone_and_inside_a_word():
    assert grams("승학") == ("승학",)
    assert "승학" in grams("동아대 승학캠퍼스 근처 응급실")
    assert grams("승학캠퍼스") == ("승학", "학캠", "캠퍼", "퍼스")


def test_kiwi_keeps_seunghak_whole_with_the_user_dictionary():
    # Without the user dictionary Kiwi splits 승학 alone into 승/학 but keeps 승학캠퍼스 whole,
    # so a query and a document would never share the term.
    assert morphs("승학") == ("승학",)
    assert "승학" in morphs("동아대 승학캠퍼스 근처 응급실 알려줘")
    assert "승학" in morphs("승학 근처 응급실")


def test_kiwi_free_query_segmentation_uses_the_document_vocabulary():
    doc_terms = morphs("동아대 승학캠퍼스 근처 응급실 알려줘")
    seg = Segmenter(doc_terms)
    # the whole query at once, no Kiwi: the same morphemes come back
    assert {"동아대", "승학", "캠퍼스", "근처", "응급실"} <= set(seg("동아대승학캠퍼스 근처 응급실 어디"))
    assert seg("승학") == ("승학",)


def test_english_is_lowercased_stemmed_and_stopwords_dropped():
    assert grams("Where is the nearest Pharmacies") == ("where", "nearest", "pharmaci")
    assert grams("ER") == ("er",)
    # fillers carry no service meaning
    assert "알려" not in grams("응급실 알려줘")


def test_query_and_document_share_terms_for_seunghak(retriever):
    # 승학 alone finds the document that only mentions 승학캠퍼스
    got = retriever.search("승학 쪽 응급실")
    assert got and got[0].adapter_id == "er_rooms"
    assert "m:승학" in retriever.query_terms("승학") and "g:승학" in retriever.query_terms("승학")


def test_a_one_syllable_morpheme_does_not_start_a_long_unknown_word():
    seg = Segmenter(["비", "약", "약국", "코인"])
    assert seg("비올까") == ("비",)
    assert "비" not in seg("비트코인")
    assert seg("약국") == ("약국",)


def test_hyphenated_english_words_split_like_kiwi_splits_them():
    assert grams("move-in report") == ("move", "report")
    assert Segmenter([])("check-up") == ("check",)
