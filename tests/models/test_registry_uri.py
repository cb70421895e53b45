"""One reading of ``models:/`` URIs (:func:`parse_registry_uri`) serves the loader, the spec checks and the recipe's
state checks."""

from __future__ import annotations

import pytest

from interlingua.models.registry_uri import RegistryURI, parse_registry_uri

LOGGED = "m-" + "0123456789abcdef" * 2


@pytest.mark.parametrize(("uri", "parts"), [
    ("models:/enc@champion", RegistryURI("enc", alias="champion")),
    ("models:/enc@champion/sub/dir", RegistryURI("enc", alias="champion", subpath="sub/dir")),
    ("models:/enc/3", RegistryURI("enc", version="3")),
    ("models:/enc/3/sub", RegistryURI("enc", version="3", subpath="sub")),
    ("models:/enc/latest", RegistryURI("enc", version="latest")),
    (f"models:/{LOGGED}", RegistryURI(logged_model_id=LOGGED)),
    ("models:/m-0123", RegistryURI("m-0123")),
    ("models:/enc", RegistryURI("enc")),
    ("models:/@champion", RegistryURI("", alias="champion")),
])
def test_a_models_uri_is_read_into_its_parts(uri, parts):
    assert parse_registry_uri(uri) == parts


@pytest.mark.parametrize(("uri", "names"), [
    ("models:/enc@champion", True), ("models:/enc/1", True), (f"models:/{LOGGED}", True),
    ("models:/enc", False), ("models:/enc@", False), ("models:/enc/", False), ("models:/@champion", False),
    ("models:/m-0123", False),
])
def test_a_uri_names_a_model_with_a_name_and_an_alias_or_version_or_as_a_logged_models_id(uri, names):
    assert parse_registry_uri(uri).names_a_model is names


@pytest.mark.parametrize("uri", ["runs:/abc/model", "/tmp/enc", "org/name", "s3://b/models:/x"])
def test_other_uris_are_not_read(uri):
    assert parse_registry_uri(uri) is None


def test_pinning_keeps_what_follows_the_alias_and_asks_the_registry_once(monkeypatch):
    """``pin_registry_uri`` and the recipe's repin read the alias through one lookup, :func:`registered_version`."""
    import types

    from interlingua.models import load

    asked = []

    class Client:
        def get_model_version_by_alias(self, name, alias):
            asked.append((name, alias))
            return types.SimpleNamespace(version="7", run_id="r" * 32)

    monkeypatch.setattr("mlflow.tracking.MlflowClient", Client)
    assert load.pin_registry_uri("models:/enc@champion/sub") == "models:/enc/7/sub"
    assert load.registered_version("models:/enc@champion") == load.RegisteredVersion("enc", "7", "r" * 32)
    assert load.registered_version("models:/enc/3") is None and load.pin_registry_uri("models:/enc/3") == "models:/enc/3"
    assert asked == [("enc", "champion"), ("enc", "champion")]
