# Set-up and entry points. `make quickstart` and `make test` each install what they need.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
UV := $(shell command -v uv 2>/dev/null)
# Debian packages behind the real offline assets (Bible via diatheke, debian-reference, Apertium: every
# English pair Debian packages; eu, is and mk ship only the X->English direction).
DEBIAN_PACKAGES := diatheke sword-text-kjv sword-text-sparv debian-reference-en debian-reference-de \
	debian-reference-fr debian-reference-es apertium apertium-eng-spa apertium-eng-cat apertium-en-gl \
	apertium-eo-en apertium-hbs-eng apertium-eu-en apertium-isl-eng apertium-mkd-eng
export TORCH_EXTENSIONS_DIR ?= $(CURDIR)/.interlingua/torch_extensions
export RAY_DEDUP_LOGS ?= 1

.PHONY: install debian-packages assets quickstart test test-all clean

$(VENV)/.installed: pyproject.toml uv.lock
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet uv==0.13.8
	uv sync --locked --extra test --compile-bytecode --quiet --python $(PYTHON)
	@touch $@

install: $(VENV)/.installed

debian-packages:
	@if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    echo "installing Debian packages: $$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null) \
	      || echo "warning: apt-get could not install $$missing; the assets and tests that need them are skipped"; \
	  fi; \
	else echo "note: not root or no apt-get: Debian-based assets (Bible, debian-reference, Apertium) may be missing"; fi

assets: install debian-packages
	$(VENV)/bin/interlingua assets

quickstart: assets
	$(VENV)/bin/interlingua run quickstart

test: install debian-packages
	@$(PY) -m pytest -m "not slow" -q -p no:cacheprovider; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

test-all: install debian-packages
	@$(PY) -m pytest -q -p no:cacheprovider; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

clean:
	rm -rf $(VENV) .interlingua mlruns mlflow.db
