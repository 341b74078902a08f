"""Free to reuse (issue 25): the licences are stated where a teacher looks.

The code is MIT (LICENSE, and pyproject.toml's ``license``), the prose, figures and exercises CC BY 4.0
(LICENSE-CONTENT); the README says both; CITATION.cff is valid Citation File Format 1.2.0 and names both.
The footer of every built page is checked in tests/site/test_licence_footer.py.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_code_licence_is_mit_and_pyproject_matches():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]


def test_content_licence_is_cc_by_4():
    text = (ROOT / "LICENSE-CONTENT").read_text()
    assert "Creative Commons Attribution 4.0 International" in text
    assert "https://creativecommons.org/licenses/by/4.0/legalcode" in text
    for term in ("Attribution", "No additional restrictions", "Share", "Adapt"):
        assert term in text, term


def test_readme_states_both_licences():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Licence and citing", 1)[1].split("\n## ", 1)[0]
    for needle in ("CC BY 4.0", "MIT", "LICENSE-CONTENT", "(LICENSE)", "CITATION.cff"):
        assert needle in section, needle


# The keys and types that CFF 1.2.0's schema (citation-file-format/citation-file-format, schema.json)
# requires or constrains for the keys this file uses.
CFF_REQUIRED = {"cff-version", "message", "title", "authors"}
CFF_KNOWN = CFF_REQUIRED | {
    "abstract",
    "date-released",
    "keywords",
    "license",
    "repository-code",
    "type",
    "url",
    "version",
}


def test_citation_file_is_valid_cff_1_2_0():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert CFF_REQUIRED <= set(cff), CFF_REQUIRED - set(cff)
    assert set(cff) <= CFF_KNOWN, set(cff) - CFF_KNOWN
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] in ("software", "dataset")
    assert isinstance(cff["authors"], list) and cff["authors"]
    for author in cff["authors"]:
        # a person has family-names/given-names, an entity a name
        assert author.get("name") or author.get("family-names"), author
    assert isinstance(cff["date-released"], (str, datetime.date))
    datetime.date.fromisoformat(str(cff["date-released"]))
    assert sorted(cff["license"]) == ["CC-BY-4.0", "MIT"]
    for key in ("repository-code", "url"):
        assert re.match(r"https://", cff[key]), key
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert cff["repository-code"] == config["repository"]["url"]
    assert cff["title"] == config["title"]
    assert all(isinstance(k, str) and k for k in cff["keywords"])


def test_site_footer_states_the_licences():
    footer = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and "https://creativecommons.org/licenses/by/4.0/" in footer
    assert "MIT" in footer
