"""Wikipedia dumps → sentences with hyperlinks → Wikidata entities → hard negatives (the EASE corpus).

Modules, one concern each:

- ``dump_shards``: plan byte-range shards of a (multistream) bz2 dump and decompress them.
- ``dump_pages``: stream ``<page>`` records out of decompressed XML (one block per page: a bad page costs only itself).
- ``multistream_writer``: re-pack a plain dump as multistream bz2 + index (to parallelize it).
- ``wikitext_markup``: strip comments, tags, templates, tables, files, categories.
- ``wikitext_links``: turn ``[[target|label]]`` into label text with a character span and a target.
- ``sentence_split``: rule-based per-language sentence splitter.
- ``titles``: title normalization and redirect resolution.
- ``page_extract``: one page → sentence rows with links (+ reasons for anything cut).
- ``extract_operator``: the Ray Data operator wrapping ``page_extract`` over dump shards.
- ``wikidata``: title → QID and QID → P31 types from a Wikidata JSON dump or ``page_props`` SQL.
- ``hard_negatives``: same-type, not-on-page negative sampling.
- ``sampling_caps``: deterministic per-entity / per-language caps.
- ``entity_vectors``: load entity vectors, or train a gensim skip-gram over link contexts.
- ``wikipedia2vec_vectors``: train Wikipedia2Vec on a dump and key its entity vectors by entity id.
- ``shard_extract`` / ``extract_operator``: one shard → Parquet in the work folder; the Ray operator over shards.
- ``entity_pairs`` / ``corpus_inputs``: pairs with negatives; driver-side readers of the work folder.
"""
