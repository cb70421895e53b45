"""A recipe stage whose config names a combination spec (``concat(A|B)``) of local folders counts each part's files in
its hash, as it counts a single model folder: a part rewritten in place runs the stage again."""

from __future__ import annotations

from tiny_models import build_tiny_bert

from interlingua.workflows.recipe_spec import RecipeConfig


def test_a_stage_reading_a_combination_reruns_when_a_part_is_rewritten(tmp_path, monkeypatch):
    import mlflow

    from interlingua.workflows import bible_bitext, hard_negatives, recipe

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    first, second = build_tiny_bert(tmp_path / "a", seed=1), build_tiny_bert(tmp_path / "b", seed=2)
    spec = f"concat({first}|{second})"
    ran = []
    monkeypatch.setattr(bible_bitext, "run", lambda config, *, address=None: {"corpus": "bible@v-01"})
    monkeypatch.setattr(hard_negatives, "run", lambda config, *, address=None: ran.append(config.model) or {})
    config = RecipeConfig.model_validate({"name": "parts", "stages": {
        "bible": {"workflow": "bible-bitext"},
        "hn": {"workflow": "hard-negatives", "config": {"corpus": "${stages.bible.corpus}", "model": spec}}}})
    try:
        assert recipe.run(config)["actions"] == {"bible": "run", "hn": "run"}
        assert recipe.run(config)["actions"] == {"bible": "skip", "hn": "skip"}  # nothing changed
        build_tiny_bert(second, seed=3)  # the second part's weights rewritten in place
        assert recipe.run(config)["actions"] == {"bible": "skip", "hn": "run"}
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)
    assert ran == [spec, spec]


def test_each_part_of_a_combination_counts_as_a_model_folder_would(tmp_path):
    from interlingua.models.identity import files_digest, local_model_folders, with_model_files

    first, second = build_tiny_bert(tmp_path / "a", seed=1), build_tiny_bert(tmp_path / "b", seed=2)
    config = {"model": f"norm_sum({first} | file://{second})", "other": f"{first}", "text": f"lower({first}|x)"}
    assert local_model_folders(config) == sorted([str(first), f"file://{second}"])
    assert with_model_files(config)["model_files"] == {str(first): files_digest(first),
                                                       f"file://{second}": files_digest(second)}
    plain = {"model": "concat(use|minilm)"}  # no part is a local folder: hashed as before
    assert with_model_files(plain) is plain


def test_st_and_wordvec_parts_count_by_their_files_as_model_identity_reads_them(tmp_path):
    """``st:FOLDER`` and ``wordvec:FILE`` (alone or as a part of ``MODE(A|B)``) were not counted: a sentence-transformers
    folder or word-vector file rewritten in place was taken for the one a finished stage used."""
    from interlingua.models.identity import files_digest, local_model_folders, with_model_files

    folder = build_tiny_bert(tmp_path / "st", seed=1)
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("2 2\nhouse 0.1 0.2\nhaus 0.3 0.4\n")
    (tmp_path / "empty").mkdir()
    config = {"model": f"concat(st:{folder} | wordvec:{vectors})", "teacher": f"st:{folder}",
              "not_models": [f"st:{tmp_path / 'empty'}", f"st:{tmp_path / 'missing'}", f"wordvec:{tmp_path}",
                             "st:~nobody-here/x"],
              "nested": f"concat(concat({folder}|use)|minilm)"}  # a part may be a combination (ae49b38)
    assert local_model_folders(config) == sorted([f"st:{folder}", f"wordvec:{vectors}", str(folder)])
    before = with_model_files(config)["model_files"]
    assert before == {f"st:{folder}": files_digest(folder), f"wordvec:{vectors}": files_digest(vectors),
                      str(folder): files_digest(folder)}
    vectors.write_text("2 2\nhouse 0.5 0.2\nhaus 0.3 0.4\n")  # rewritten in place
    assert with_model_files(config)["model_files"][f"wordvec:{vectors}"] != before[f"wordvec:{vectors}"]
