"""Real offline datasets built from Debian packages (see shared/DESIGN.md, "What is available offline").

- :mod:`interlingua.workflows.assets.debian_packages` — check/install the Debian packages an asset needs.
- :mod:`interlingua.workflows.assets.bible` — English–Spanish verse-aligned Bible bitext (KJV × Reina-Valera 1909).
- :mod:`interlingua.workflows.assets.debian_reference` — held-out en–{de,fr,es} paragraph pairs (Debian Reference).
"""
