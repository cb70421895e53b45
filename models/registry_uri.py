"""The parts of a ``models:/`` URI, read in one place: by the loader, the commands that check a spec before they ask
the registry, and the recipe's check of its state file."""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "models:/"
#: The id MLflow 3 gives a logged model (``m-`` and a UUID's 32 hex digits): ``models:/<id>`` names it, not a version.
_LOGGED_MODEL_ID = re.compile(r"m-[0-9a-f]{32}")


@dataclass(frozen=True)
class RegistryURI:
    """``models:/NAME@ALIAS[/PATH]`` (``alias``), ``models:/NAME/VERSION[/PATH]`` (``version``: as MLflow reads it, a
    number, ``latest`` or a stage) or MLflow 3's logged model ``models:/m-<32 hex digits>`` (``logged_model_id``); a
    part the URI lacks is ""."""

    name: str = ""
    alias: str = ""
    version: str = ""
    subpath: str = ""
    logged_model_id: str = ""

    @property
    def names_a_model(self) -> bool:
        """Whether it names a registered version (a name and an alias or a version) or a logged model."""
        return bool(self.name and (self.alias or self.version)) or bool(self.logged_model_id)


def parse_registry_uri(uri: str) -> RegistryURI | None:
    """The parts of a ``models:/`` URI (:class:`RegistryURI`; a URI of neither form has ``names_a_model`` false);
    None for any other URI."""
    if not uri.startswith(PREFIX):
        return None
    head, _, tail = uri[len(PREFIX):].partition("/")
    name, at, alias = head.partition("@")
    if at:
        return RegistryURI(name, alias=alias, subpath=tail)
    if not tail and _LOGGED_MODEL_ID.fullmatch(head):
        return RegistryURI(logged_model_id=head)
    version, _, subpath = tail.partition("/")
    return RegistryURI(name, version=version, subpath=subpath)
