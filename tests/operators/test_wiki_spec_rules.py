"""Adversarial checks of the EASE extraction rules, one small hand-written page per rule."""

import time
from collections import Counter

import pytest
from interlingua.operators.wiki import page_extract
from interlingua.operators.wiki.dump_pages import RawPage
from interlingua.operators.wiki.page_extract import ExtractionSettings, extract_page, page_link_titles
from interlingua.operators.wiki.sentence_split import split_sentences
from interlingua.operators.wiki.titles import RedirectTable, normalize_title
from interlingua.operators.wiki.wikitext_links import render_paragraph
from interlingua.operators.wiki.wikitext_markup import NamespacePrefixes, strip_markup

SETTINGS = ExtractionSettings(min_sentence_chars=5)


def page(text: str, title: str = "Page", redirect: str | None = None) -> RawPage:
    return RawPage(page_id=1, title=title, namespace=0, redirect=redirect, text=text)


def pairs(text: str, lang: str = "en", title: str = "Page", settings: ExtractionSettings = SETTINGS):
    """``[(sentence, [(anchor as sliced from the sentence, target), ...]), ...]`` of one page."""
    result = extract_page(page(text, title), lang, settings)
    assert result.rejected is None, result.issues
    return [
        (s.sentence, [(s.sentence[a:b], t) for a, b, t in zip(s.starts, s.ends, s.targets, strict=True)])
        for s in result.sentences
    ]


def render(text: str, lang: str = "en", prefixes: NamespacePrefixes = NamespacePrefixes()):
    issues: Counter = Counter()
    paragraph = render_paragraph(strip_markup(text, prefixes, 40, issues), prefixes, issues, lang)
    return paragraph.text, [(paragraph.text[link.start : link.end], link.target) for link in paragraph.links]


# --- what is stripped -------------------------------------------------------------------------------------


def test_files_images_and_categories_in_any_language_are_removed_whole():
    text = (
        "[[Image:A.png|thumb|left|Caption with [[Rome]]]][[Datei:B.jpg|mini|Bild [[Berlin]]]]"
        "[[Файл:C.jpg|мини|Надпис [[София]]]][[Fichier:D.svg|vignette|[[Lyon]]]][[Foo:E.JPG|thumb|x]]"
        "The city lies on the [[Seine]].[[Category:Cities]][[Kategorie:Stadt]][[Категория:Градове]]"
    )
    assert render(text) == ("The city lies on the Seine.", [("Seine", "Seine")])


def test_namespaces_named_by_the_wikis_siteinfo_are_removed():
    prefixes = NamespacePrefixes.from_siteinfo({6: "Fitxer", 14: "Categoria", 10: "Plantilla", -2: "Medi"})
    text = "[[Fitxer:X.jpg|miniatura|[[Roma]]]]Text de [[Barcelona]] i [[Plantilla:Y|z]].[[Categoria:Ciutats]]"
    assert render(text, "ca", prefixes) == ("Text de Barcelona i z.", [("Barcelona", "Barcelona")])


def test_media_links_keep_their_label_but_name_no_entity():
    assert render("Listen [[Media:Anthem.ogg|to the anthem]] of [[France]].") == (
        "Listen to the anthem of France.",
        [("France", "France")],
    )


def test_interlanguage_links_versus_articles_with_a_colon():
    text = (
        "See [[Re:Zero]] and [[Star Wars: Episode IV]] and [[:fr:Paris|Paris en français]]."
        "[[fr:Paris]][[zh-min-nan:Paris]]"
    )
    assert render(text) == (
        "See Re:Zero and Star Wars: Episode IV and Paris en français.",
        [("Re:Zero", "Re:Zero"), ("Star Wars: Episode IV", "Star Wars: Episode IV")],
    )


def test_a_prefix_naming_the_wikis_own_language_is_a_local_link():
    # MediaWiki drops a redundant prefix that points back at the wiki itself: [[en:Rome|Rome]] on enwiki is [[Rome|Rome]]
    text = "The capital is [[en:Rome|Rome]], not [[:en:Turin]] or [[en : milan|Milan]].[[de:Rom]][[en:Category:Cities]]"
    result = extract_page(page(text), "en", SETTINGS)
    assert pairs(text) == [("The capital is Rome, not en:Turin or Milan.",
                            [("Rome", "Rome"), ("en:Turin", "Turin"), ("Milan", "Milan")])]
    assert result.linked_titles == ("Milan", "Rome", "Turin")  # the page-wide set the negatives avoid
    # on another language's wiki the same link is an interlanguage link, removed whole; that wiki's own prefix is local
    german = "Rom ist die [[de:Hauptstadt|Hauptstadt]] Italiens, [[en:Rome|Rome]] auf Englisch."
    assert pairs(german, "de") == [("Rom ist die Hauptstadt Italiens, auf Englisch.", [("Hauptstadt", "Hauptstadt")])]
    prefixes = NamespacePrefixes.from_siteinfo({14: "Category"}, own_language="en")
    assert render("See [[en:Paris|the city]] and [[fr:Paris|Paris]].[[en:Category:X]]", prefixes=prefixes) == (
        "See the city and .", [("the city", "Paris")])
    assert render("See [[en:Paris|the city]].") == ("See .", [])  # no own language given: an interlanguage link


def test_interwiki_prefixes_to_other_projects_keep_their_label_and_name_no_entity():
    assert render("[[w:Rome|Rome]] and [[w:Milan]] and [[wikt:city|cities]] of [[Italy]].") == (
        "Rome and w:Milan and cities of Italy.", [("Italy", "Italy")])


def test_references_templates_tables_comments_and_tags_are_removed():
    text = (
        "{{Infobox|a={{b|[[Hidden]]}}}}Paris<ref name=x>{{cite|[[Cited]]}}</ref><ref name=x/> is a "
        "<span class=a>[[city]]</span><!-- [[Commented]] --> in [[France]].<br/>\n{|\n| [[Cell]]\n|}\n"
        "__NOTOC__It has {{{1|params}}} [[Louvre|museums]]."
    )
    assert pairs(text) == [
        ("Paris is a city in France.", [("city", "City"), ("France", "France")]),
        ("It has museums.", [("museums", "Louvre")]),
    ]


def test_nowiki_is_literal_text_and_ends_a_link_trail():
    assert render("A [[Bus]]<nowiki/>es stop. Type <nowiki>[[Not a link]] ''x''</nowiki> and [[Rome]].") == (
        "A Buses stop. Type [[Not a link]] ''x'' and Rome.",
        [("Bus", "Bus"), ("Rome", "Rome")],
    )


# --- link text, spans and targets ------------------------------------------------------------------------


def test_link_text_and_spans_follow_mediawiki_rendering():
    text = (
        "A [[Target|anchor text]], a [[Target]], [[bus]]es, [[Bus]]Es, [[a|b]]c, [[New_York]], "
        "[[Paris#History]], [[:Rome]] and [[Berlin ]]er stand here."
    )
    ((sentence, links),) = pairs(text)
    assert sentence == (
        "A anchor text, a Target, buses, BusEs, bc, New_York, Paris#History, Rome and Berliner stand here."
    )
    assert links == [
        ("anchor text", "Target"),
        ("Target", "Target"),
        ("buses", "Bus"),
        ("Bus", "Bus"),
        ("bc", "A"),
        ("New_York", "New York"),
        ("Paris#History", "Paris"),
        ("Rome", "Rome"),
        ("Berliner", "Berlin"),
    ]


@pytest.mark.parametrize(
    ("lang", "text", "anchor"),
    [
        ("en", "The [[Paris]]é cafe opened.", "Paris"),
        ("fr", "Le [[Paris]]é est beau.", "Parisé"),
        ("de", "Die [[Straße]]n sind voll.", "Straßen"),
        ("bg", "Градът [[София]]та е голям.", "Софията"),
        ("ru", "Город [[Москва]]ми хорош.", "Москвами"),
        ("zh", "北京[[中国]]abc首都。", "中国"),
    ],
)
def test_link_trails_are_per_language(lang, text, anchor):
    ((_, ((shown, _target),)),) = pairs(text, lang)
    assert shown == anchor


def test_a_section_link_on_the_page_refers_to_the_page_itself():
    assert pairs("The [[#History|history]] of the city is long.", title="rome") == [
        ("The history of the city is long.", [("history", "Rome")])
    ]
    assert page_link_titles("[[#History]] [[paris#Top|x]]", SETTINGS, "Rome") == ("Paris", "Rome")


def test_unclosed_link_does_not_hide_later_files_or_links():
    text = "Broken [[unclosed text here. Then [[File:X.jpg|thumb|caption words]] and [[Paris]] ok."
    assert pairs(text) == [("Then and Paris ok.", [("Paris", "Paris")])]


def test_link_whose_target_spans_lines_or_holds_a_link_is_not_a_link():
    text = "See [[Foo\nbar]] here and [[open [[Paris]] now ]] too."
    assert render(text) == ("See Foo bar here and open Paris now too.", [("Paris", "Paris")])


def test_external_links_and_stray_brackets():
    text = "Visit [https://x.org the site], [//y.org proto], [mailto:a@b.c mail], [http://z.org] or [http://open now."
    assert render(text)[0] == "Visit the site, proto, mail, or [http://open now."


# --- titles and redirects --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("paris", "Paris"),
        ("new_york__city", "New york city"),
        ("  New \t York  ", "New York"),
        ("Paris#History", "Paris"),
        (":rome", "Rome"),
        (":Category:Cats", "Category:Cats"),
        ("éclair", "Éclair"),
        ("ßeta", "ßeta"),
        ("თბილისი", "თბილისი"),
        ("\u200eParis\u200f", "Paris"),
        ("Caf%C3%A9", "Café"),
        ("AT&amp;T", "AT&T"),
        ("#History", ""),
    ],
)
def test_normalize_title(raw, expected):
    assert normalize_title(raw) == expected


def test_pure_anchor_normalizes_to_the_page_title():
    assert normalize_title("#History", page_title="Rome") == "Rome"
    assert normalize_title("", page_title="Rome") == ""


def test_redirect_pages_are_recognized_with_or_without_the_redirect_element():
    assert extract_page(page("#REDIRECT [[target_page#Sec]]"), "en", SETTINGS).redirect_target == "Target page"
    assert extract_page(page("#redirect:[[x]]\n{{R from move}}"), "en", SETTINGS).redirect_target == "X"
    assert extract_page(page("#WEITERLEITUNG [[Berlin]]"), "de", SETTINGS).redirect_target == "Berlin"
    assert extract_page(page("#ПРЕНАСОЧВАНЕ [[София]]"), "bg", SETTINGS).redirect_target == "София"
    assert extract_page(page("text", redirect="a_b"), "en", SETTINGS).redirect_target == "A b"
    assert extract_page(page("Not a #REDIRECT [[X]] page."), "en", SETTINGS).redirect_target is None


def test_redirect_chains_are_followed_to_the_end():
    table = RedirectTable([("A", "B"), ("B", "C"), ("C", "D"), ("Loop1", "Loop2"), ("Loop2", "Loop1")])
    assert table.resolve("A") == "D" and table.resolve("B") == "D" and table.resolve("D") == "D"
    assert table.resolve("Loop1") in {"Loop1", "Loop2"} and table.broken_chains == 1


def test_page_link_set_covers_every_article_link_on_the_page():
    text = (
        "Prose [[rome]].\n* list [[new_york#x|NY]]\n{{Navbox|[[ madrid ]]}}\n{|\n| [[:lyon]]\n|}\n"
        "<ref>[[Cited_Work]]</ref>[[File:X.jpg|thumb|[[Caption City]]]][[Category:Y]][[fr:Paris]][[Help:Z]]"
        "[[broken link without close"
    )
    assert page_link_titles(text, SETTINGS) == ("Caption City", "Cited Work", "Lyon", "Madrid", "New york", "Rome")


# --- sentence splitting -----------------------------------------------------------------------------------


def sentences(text: str, lang: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text, lang)]


def test_number_abbreviations_only_block_before_a_number():
    assert sentences("He said no. The end. See No. 5 now.", "en") == ["He said no.", "The end.", "See No. 5 now."]


def test_scripts_without_case_split_too():
    assert sentences("משפט ראשון. משפט שני.", "he") == ["משפט ראשון.", "משפט שני."]
    assert sentences("यह पहला वाक्य है। यह दूसरा है।", "hi") == ["यह पहला वाक्य है।", "यह दूसरा है।"]
    assert sentences("Es ist gut. - nicht wahr.", "de") == ["Es ist gut. - nicht wahr."]


def test_sentence_splitting_is_linear_on_punctuation_runs():
    started = time.perf_counter()
    assert sentences("." * 300_000 + " Next one.", "en")[-1] == "Next one."
    assert time.perf_counter() - started < 5


# --- bad input --------------------------------------------------------------------------------------------


def test_templates_5000_deep_are_cut_with_a_reason_quickly_and_without_recursion():
    text = "Kept [[Start]] here. " + "{{a|" * 5000 + "x" + "}}" * 5000 + " Tail [[Lost]] here."
    started = time.perf_counter()
    result = extract_page(page(text), "en", SETTINGS)
    assert time.perf_counter() - started < 5
    assert [s.sentence for s in result.sentences] == ["Kept Start here."]
    assert result.issues["template_depth_exceeded"] == 1 and result.rejected is None
    deep_args = "Kept [[Start]] here. " + "{{{a|" * 5000 + "}}}" * 5000
    assert extract_page(page(deep_args), "en", SETTINGS).issues["template_depth_exceeded"] == 1


@pytest.mark.parametrize(
    "unit",
    ["<!--x ", "<ref>x ", "<nowiki>x ", "[//x.org ", "[[x ", "]]x ", "{{x ", "}}x ", "[[File:x|", "{|\n", "''x "],
)
def test_thousands_of_unclosed_tokens_cost_linear_time(unit):
    text = "Kept [[Start]] here.\n\n" + unit * 50_000
    started = time.perf_counter()
    result = extract_page(page(text), "en", SETTINGS)
    assert time.perf_counter() - started < 10
    assert result.rejected is None


def test_nested_links_and_tables_thousands_deep():
    for text in (
        "[[File:a.jpg|" * 5000 + "x" + "]]" * 5000,
        "[[a|" * 5000 + "x" + "]]" * 5000,
        "{|\n" * 5000 + "x\n" + "|}\n" * 5000,
    ):
        result = extract_page(page("Start [[A]] here.\n" + text + "\nTail [[B]] here."), "en", SETTINGS)
        assert [s.sentence for s in result.sentences] == ["Start A here.", "Tail B here."]


def test_a_page_that_breaks_the_extractor_is_rejected_not_raised(monkeypatch):
    def explode(*_args):
        raise RecursionError("boom")

    monkeypatch.setattr(page_extract, "strip_markup", explode)
    result = extract_page(page("Fine [[Text]] here."), "en", SETTINGS)
    assert result.rejected == "extraction_error" and result.issues["extraction_error_RecursionError"] == 1


def test_invalid_utf8_marker_in_title_or_text_rejects_the_page():
    assert extract_page(page("ok [[A]] text.", title="B\ufffdd"), "en", SETTINGS).rejected == "invalid_utf8"
    assert extract_page(page("bad \ufffd [[A]] text."), "en", SETTINGS).rejected == "invalid_utf8"


def test_link_across_a_sentence_boundary_is_dropped_and_counted():
    result = extract_page(page("One [[Some place|ends here. Two]] starts. Fine [[Paris]] too."), "en", SETTINGS)
    assert [(s.sentence, s.targets) for s in result.sentences] == [("Fine Paris too.", ("Paris",))]
    assert result.issues["link_across_sentences"] == 1


def test_entities_are_decoded_in_text_and_labels_but_never_make_markup():
    assert render("A caf&eacute; near [[Paris|the&nbsp;city]] and &#91;&#91;Rome&#93;&#93; today.") == (
        "A café near the city and [[Rome]] today.",
        [("the city", "Paris")],
    )


def test_a_comment_inside_a_link_target_leaves_the_target_on_the_page():
    """``[[Lyon<!-- sister city -->]]`` links Lyon: the page's link set holds Lyon (never its hard negative), not
    'Lyon<!-- sister city -->'; links inside comments still count, as the module documents."""
    text = ("Alpha is near [[Paris]] today.\n* Twin: [[Lyon<!-- sister city -->]]\n* [[Rome|<!-- x -->Roma]] "
            "[[Nice<!-- a [[Metz]] note -->|Nizza]] <!-- [[Hidden]] --> [[Berlin]]<!-- unclosed [[Tail]]")
    assert page_link_titles(text, SETTINGS, "Alpha") == ("Berlin", "Hidden", "Lyon", "Metz", "Nice", "Paris", "Rome",
                                                        "Tail")
    result = extract_page(RawPage(1, "Alpha", 0, None, text), "en", SETTINGS)
    assert "Lyon" in result.linked_titles and not any("<!--" in t for t in result.linked_titles)
