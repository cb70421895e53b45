"""Bottom layer: user errors, typed config base, runtime defaults. Imports nothing of interlingua."""
