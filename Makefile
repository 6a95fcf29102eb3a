# make lab   set up .venv (building the module) and open the course in JupyterLab
# make test  set up .venv and run every test, notebooks included
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test setup doctor soak asan clean

lab: $(STAMP)
	$(BIN)/python -m trafikey_lab doctor
	$(BIN)/jupyter lab notebooks/

test: $(STAMP)
	$(BIN)/python -m pytest --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/sanitize.cfg tests notebooks

setup: $(STAMP)

doctor: $(STAMP)
	$(BIN)/python -m trafikey_lab doctor

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "trafikey lab needs Python 3.11 or newer: set PYTHON=python3.11 (or newer)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

# Reinstalled whenever the package's build inputs change, so the module is never stale.
$(STAMP): $(VENV)/bin/python pyproject.toml setup.py trafikey_lab/module/trafikey.c trafikey_lab/module/valkey_api.h
	$(BIN)/python -m pip install -e '.[lab,test]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info trafikey_lab/module/trafikey.so
