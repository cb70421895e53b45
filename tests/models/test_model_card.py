from interlingua.models.model_card import ModelCard


def test_card_renders_table_tags_and_config():
    card = ModelCard(base_model="e5-small", objective="ease", workflow="train",
                     corpus_versions={"ease-corpus": "v1", "bible": "v2"}, languages=["en", "es"],
                     config={"train": {"lr": 1e-5}},
                     evaluation=[{"task": "bible en-es", "metric": "acc", "base": 95.3, "tuned": 98.4}])
    text = card.to_markdown()
    assert "| bible en-es | acc | 95.30 | 98.40 |" in text
    assert "`bible@v2`, `ease-corpus@v1`" in text
    assert '"lr": 1e-05' in text
    assert card.tags()["interlingua.corpus_versions"] == "bible@v2,ease-corpus@v1"
    assert card.tags()["interlingua.languages"] == "en,es"
    assert ModelCard(**card.to_dict()) == card
