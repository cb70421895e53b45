"""The offline benchmark pack: evaluation tasks built from real data that ships with registry packages."""
