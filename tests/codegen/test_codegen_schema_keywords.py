"""Keys in an adapter's JSON Schemas must be JSON Schema keywords or x- keys: a typo or a YAML
flow-mapping slip would otherwise weaken the schema without a word from jsonschema."""

from __future__ import annotations

from ummaya.codegen.schema_keywords import unknown_keywords
from tests.codegen.project import NMC, edit, line_of
from tests.codegen.test_codegen_bad_input import build_fails


def test_an_unquoted_comma_in_a_flow_mapping_is_a_located_error(built):
    path = built / NMC
    edit(path, "description: How many institutions}", "description: How many institutions, nearest first}")
    problems = build_fails(built)
    line = line_of(path, "nearest first}")
    assert len(problems) == 1
    assert problems[0].startswith(f"{NMC}:{line}: input_schema.properties.limit: 'nearest first' is not a JSON Schema keyword")
    assert "quote the value" in problems[0]


def test_a_misspelt_keyword_is_a_located_error(built):
    path = built / NMC
    edit(path, "  required: [latitude, longitude]\n", "  requried: [latitude, longitude]\n")
    problems = build_fails(built)
    assert f"{NMC}:{line_of(path, 'requried:')}: input_schema: 'requried' is not a JSON Schema keyword (x- for extensions)" in problems


def test_nested_schemas_are_walked_and_extensions_pass():
    schema = {
        "type": "object", "x-note": 1,
        "properties": {"a": {"type": "array", "items": {"type": "string", "maxLenght": 3}}},
        "anyOf": [{"required": ["a"]}, {"titel": "b"}],
        "$defs": {"d": {"type": "integer", "x-slot": "count"}},
    }
    assert sorted(k for _, k in unknown_keywords(schema)) == ["maxLenght", "titel"]
