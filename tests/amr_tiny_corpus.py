"""A tiny ``amr-corpus`` version written directly with ``CorpusStore``: NLI triples in English and Spanish
with hand-written linearized graphs (some Spanish rows unparsed, one triple without its English
contradiction).

    from amr_tiny_corpus import write_tiny_amr_corpus
    manifest = write_tiny_amr_corpus(state / "corpus")     # corpus "amr-corpus", latest version
"""

from __future__ import annotations

from pathlib import Path

COLUMNS = ("source_id", "role", "lang", "text", "penman", "linearized")

#: (premise, entailment, contradiction), each (English, Spanish, linearized graph).
TRIPLES = [
    (("the cat sits on the mat", "el gato se sienta en la alfombra", "( sit-01 :ARG1 ( cat ) :location ( mat ) )"),
     ("a cat sits", "un gato se sienta", "( sit-01 :ARG1 ( cat ) )"),
     ("the cat runs", "el gato corre", "( run-02 :ARG0 ( cat ) )")),
    (("the boy wants to go", "el chico quiere ir", "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )"),
     ("a boy wants something", "un chico quiere algo", "( want-01 :ARG0 ( boy ) :ARG1 ( thing ) )"),
     ("the boy sleeps", "el chico duerme", "( sleep-01 :ARG0 ( boy ) )")),
    (("we read a book", "nosotros leemos un libro", "( read-01 :ARG0 ( we ) :ARG1 ( book ) )"),
     ("we want a book", "nosotros queremos un libro", "( want-01 :ARG0 ( we ) :ARG1 ( book ) )"),
     ("we see water", "nosotros vemos agua", "( see-01 :ARG0 ( we ) :ARG1 ( water ) )")),
    (("the dog runs", "el perro corre", "( run-02 :ARG0 ( dog ) )"),
     ("a dog runs", "un perro corre", "( run-02 :ARG0 ( dog ) )"),
     ("the dog sits", "el perro se sienta", "( sit-01 :ARG1 ( dog ) )")),
    (("i like bread", "me gusta el pan", "( like-01 :ARG0 ( i ) :ARG1 ( bread ) )"),
     ("i want bread", "quiero pan", "( want-01 :ARG0 ( i ) :ARG1 ( bread ) )"),
     ("i see a house", "veo una casa", "( see-01 :ARG0 ( i ) :ARG1 ( house ) )")),
    (("the house is big", "la casa es grande", "( big :domain ( house ) )"),
     ("a big house", "una casa grande", "( house :mod ( big ) )"),
     ("the house is small", "la casa es pequeña", "( small :domain ( house ) )")),
    (("you read the red book", "tu lees el libro rojo", "( read-01 :ARG0 ( you ) :ARG1 ( book :mod ( red ) ) )"),
     ("you read a book", "tu lees un libro", "( read-01 :ARG0 ( you ) :ARG1 ( book ) )"),
     ("you sleep", "tu duermes", "( sleep-01 :ARG0 ( you ) )")),
    (("good morning", "buenos dias", "( morning :mod ( good ) )"),
     ("a good morning", "una buena mañana", "( morning :mod ( good ) )"),
     ("good night", "buenas noches", "( night :mod ( good ) )")),
    (("the blue mat", "la alfombra azul", "( mat :mod ( blue ) )"),
     ("a blue mat", "una alfombra azul", "( mat :mod ( blue ) )"),
     ("a red mat", "una alfombra roja", "( mat :mod ( red ) )")),
]
ROLES = ("premise", "entailment", "contradiction")
#: triple without its English contradiction: skipped by the mixing
INCOMPLETE = "t008"
#: Spanish rows of these triples have no graph (their parse "failed")
UNPARSED_ES = ("t001", "t004")


def tiny_amr_rows() -> list[dict]:
    rows = []
    for i, triple in enumerate(TRIPLES):
        source_id = f"t{i:03d}"
        for role, (en, es, graph) in zip(ROLES, triple):
            if not (source_id == INCOMPLETE and role == "contradiction"):
                rows.append({"source_id": source_id, "role": role, "lang": "en", "text": en, "penman": "",
                             "linearized": graph})
            es_graph = "" if source_id in UNPARSED_ES else graph
            rows.append({"source_id": source_id, "role": role, "lang": "es", "text": es, "penman": "",
                         "linearized": es_graph})
    return rows


def write_tiny_amr_corpus(root: str | Path, name: str = "amr-corpus"):
    """Publish the tiny corpus under the store ``root``; returns its manifest."""
    import pyarrow as pa

    from interlingua.operators.corpus.store import CorpusStore

    rows = tiny_amr_rows()
    table = pa.table({c: pa.array([r[c] for r in rows], type=pa.string()) for c in COLUMNS})
    writer = CorpusStore(str(root)).open_version(name, {"tiny": True}, ["tests/amr_tiny_corpus.py"])
    if not writer.published:
        writer.write_shard("shard-00000", table, [], counters={"rows": len(rows), "triples": len(TRIPLES)})
    return writer.publish(expected_shards=["shard-00000"])
