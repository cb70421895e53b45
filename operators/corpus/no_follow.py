"""The corpus store's folders are listed, written and deleted without following symbolic links: the rule lives in
:mod:`interlingua.core.no_follow` (gc deletes under it too); its names are re-exported here."""

from interlingua.core.no_follow import StoreFolders, StoreLinkError, is_local, replace_file

__all__ = ["StoreFolders", "StoreLinkError", "is_local", "replace_file"]
