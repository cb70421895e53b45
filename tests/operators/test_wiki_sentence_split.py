"""Rule-based sentence splitting and title normalization / redirects."""

from interlingua.operators.wiki.sentence_split import split_sentences
from interlingua.operators.wiki.titles import RedirectTable, normalize_title


def sentences(text: str, lang: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text, lang)]


def test_english_abbreviations_initials_and_quotes():
    text = 'Dr. J. R. R. Tolkien wrote books, e.g. The Hobbit. He lived in Oxford! "Yes," he said. 2020 was odd? Maybe.'
    assert sentences(text, "en") == [
        "Dr. J. R. R. Tolkien wrote books, e.g. The Hobbit.",
        "He lived in Oxford!",
        '"Yes," he said.',
        "2020 was odd?",
        "Maybe.",
    ]


def test_lowercase_after_period_is_not_a_boundary():
    assert sentences("Version 2.0 is out. it works. Done.", "en") == ["Version 2.0 is out. it works.", "Done."]


def test_bulgarian_abbreviation_list():
    text = "Роден е през 1582 г. в Рим. Той е папа."
    assert sentences(text, "bg") == ["Роден е през 1582 г. в Рим.", "Той е папа."]
    assert sentences(text, "xx") == ["Роден е през 1582 г. в Рим.", "Той е папа."]  # 'в' is lower case
    assert sentences("Има градове, напр. София. Друго.", "bg") == ["Има градове, напр. София.", "Друго."]
    assert sentences("Има градове, напр. София. Друго.", "xx") == ["Има градове, напр.", "София.", "Друго."]


def test_chinese_full_width_punctuation():
    assert sentences("我是学生。你好！", "zh") == ["我是学生。", "你好！"]


def test_normalize_title():
    assert normalize_title("barack_Obama#Early life") == "Barack Obama"
    assert normalize_title("  new__york  city ") == "New york city"
    assert normalize_title("#Section") == ""
    assert normalize_title(":Category:Cats") == "Category:Cats"
    assert normalize_title("iPhone", first_letter_case=False) == "iPhone"


def test_redirect_chains_and_cycles():
    table = RedirectTable([("A", "B"), ("B", "C"), ("X", "Y"), ("Y", "X")])
    assert table.resolve("A") == "C"
    assert table.resolve("C") == "C"
    assert table.resolve("X") in {"X", "Y"}
    assert table.broken_chains == 1
