"""Wikitext → prose with link spans: templates, tables, refs, files, links, bad markup."""

from collections import Counter

import mwparserfromhell
import pytest
from interlingua.operators.wiki.dump_pages import RawPage
from interlingua.operators.wiki.page_extract import ExtractionSettings, extract_page
from interlingua.operators.wiki.wikitext_links import iter_paragraphs, render_paragraph
from interlingua.operators.wiki.wikitext_markup import NamespacePrefixes, strip_markup

PREFIXES = NamespacePrefixes()


def clean(text: str, depth: int = 40) -> tuple[str, Counter]:
    issues: Counter = Counter()
    return strip_markup(text, PREFIXES, depth, issues), issues


def render(text: str):
    issues: Counter = Counter()
    paragraph = render_paragraph(clean(text)[0], PREFIXES, issues)
    return paragraph.text, [(paragraph.text[link.start : link.end], link.target) for link in paragraph.links]


def page(text: str, title: str = "Page", page_id: int = 1) -> RawPage:
    return RawPage(page_id=page_id, title=title, namespace=0, redirect=None, text=text)


def test_nested_templates_refs_comments_and_tables_are_removed():
    text = (
        "{{Infobox|name={{lang|fr|Paris}}|pop={{{1|2}}}}}A <!-- hidden [[Secret]] -->city"
        "<ref name=a>{{cite|url=x}} [[RefLink]]</ref><ref name=b/> on the [[Seine]].\n"
        "{| class=wikitable\n|-\n| [[InTable]] {{x}}\n|}\nAfter."
    )
    out, issues = clean(text)
    assert out == "A city on the [[Seine]].\n\nAfter."
    assert not issues


def test_file_category_and_interlanguage_links_are_removed_whole():
    text = "[[File:X.jpg|thumb|A caption with [[Nested link]] inside]]Before [[Category:Cities]][[fr:Paris]] [[Paris|the city]]."
    assert render(text) == ("Before the city.", [("the city", "Paris")])


def test_link_forms_give_exact_label_spans():
    text = "'''Bold''' [[Bus]]es, [[Foo (band)|]], [[a_b#History|label]], [[:Category:Cats|cats]], [http://x.org site] [http://y.org]."
    sentence, links = render(text)
    assert sentence == "Bold Buses, Foo, label, cats, site ."
    assert links == [("Buses", "Bus"), ("Foo", "Foo (band)"), ("label", "a_b#History")]


def test_links_agree_with_mwparserfromhell_on_a_clean_paragraph():
    text = "The [[Moon]] orbits [[Earth|our planet]] and [[Sun|the Sun]] lights [[Mars]]."
    reference = [str(link.title) for link in mwparserfromhell.parse(text).filter_wikilinks()]
    sentence, links = render(text)
    assert [target for _, target in links] == reference
    assert sentence == mwparserfromhell.parse(text).strip_code()


def test_templates_nested_thousands_deep_cut_the_page_with_a_reason():
    deep = "Kept [[Start]] sentence here. " + "{{a|" * 5000 + "x" + "}}" * 5000 + " Tail [[Lost]]."
    out, issues = clean(deep)
    assert issues["template_depth_exceeded"] == 1
    assert out == "Kept [[Start]] sentence here. "


def test_unclosed_link_and_template_are_dropped_as_tokens_and_counted():
    out, issues = clean("Text {{unclosed and [[broken link. More [[Good]] text.")
    assert out == "Text unclosed and broken link. More [[Good]] text."
    assert issues["unclosed_template"] == 1 and issues["unclosed_link"] == 1


def test_unclosed_comment_hides_the_rest():
    out, issues = clean("Visible. <!-- never closed [[X]]")
    assert out == "Visible. " and issues["unclosed_comment"] == 1


def test_paragraphs_skip_headings_lists_and_tables():
    text = "== Title ==\nFirst line\nsecond line.\n* item [[X]]\n\nNext para."
    assert iter_paragraphs(text) == ["First line second line.", "Next para."]


def test_extract_page_spans_targets_and_rejections():
    settings = ExtractionSettings(min_sentence_chars=5)
    result = extract_page(
        page("Dr. Smith met [[barack_Obama#Early|Obama]]. He went to [[Paris]] and [[paris]]."), "en", settings
    )
    assert [s.sentence for s in result.sentences] == ["Dr. Smith met Obama.", "He went to Paris and paris."]
    first, second = result.sentences
    assert first.targets == ("Barack Obama",) and first.sentence[first.starts[0] : first.ends[0]] == "Obama"
    assert second.targets == ("Paris", "Paris")
    assert extract_page(page("x" * 101), "en", ExtractionSettings(max_page_chars=100)).rejected == "page_too_large"
    assert extract_page(page("bad \ufffd byte [[X]]."), "en", settings).rejected == "invalid_utf8"
    redirect = extract_page(RawPage(2, "Obama", 0, "barack_Obama", "#REDIRECT [[Barack Obama]]"), "en", settings)
    assert redirect.redirect_target == "Barack Obama" and not redirect.sentences


@pytest.mark.parametrize("bad", [{"max_page_chars": 0}, {"min_sentence_chars": 50, "max_sentence_chars": 10}])
def test_settings_are_validated(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        ExtractionSettings(**bad)
