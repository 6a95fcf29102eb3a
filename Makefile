# make lab   set up .venv (building the module) and open the course in JupyterLab
# make test  set up .venv and run every test, notebooks included
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab app test browser setup doctor soak asan mutants bench clean wheelhouse offline-check binder-check \
	book book-check linkcheck hub hub-check lock peers

lab: $(STAMP)
	$(BIN)/python -m trafikey_lab doctor
	$(BIN)/jupyter lab notebooks/ $$([ "$$(id -u)" = 0 ] && echo --allow-root)

# make app  the projector app: the course's three widgets, no code, served by Voila on
#           http://127.0.0.1:$(APP_PORT)/. Each page load runs its own kernel and live server.
#           Its settings are app/voila.json: loopback only; a page that closes shuts its kernel
#           down with a beacon that Voila 0.5 sends without the XSRF token its check wants, so
#           the check is off (the app has no token, and a shutdown needs the kernel's random
#           id); the culler ends a kernel whose page vanished silently, after two idle
#           minutes. APP_ARGS adds options (APP_ARGS=--no-browser).
APP_PORT ?= 8866
app: $(STAMP)
	$(BIN)/voila app/projector.ipynb --Voila.config_file_paths=app --port=$(APP_PORT) $(APP_ARGS)

# Two workers (pytest-xdist): most tests wait on a server, a kernel or a browser, so two keep
# two cores busy. --dist loadfile runs each file in one worker, in order: a notebook's cells
# share one kernel, a file's fixtures one server. (Each worker starts its own session server,
# and its own JupyterLab for the browser files it gets. xdist's loadgroup, which could keep the
# browser files together, does not group under pytest 9.) The slowest tests are listed last.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=20 \
		--nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg tests notebooks

# make peers  the other queues played for real (peers/, issue 34): RQ, arq, BullMQ and Sidekiq,
#             each against lab servers of its own, through a killed worker, a restart longer
#             than the lease and a short one, trafikey's histories beside them; fails where a
#             library no longer does what its recording in peers/recordings says (counted,
#             fate, runs). BullMQ from peers/bullmq/package-lock.json (npm ci), arq in a
#             virtualenv of its own (it needs redis-py below 6); Node and Ruby's Sidekiq must
#             be there (.ci/run installs them). About four minutes.
PEERS_BULLMQ := peers/bullmq/node_modules/.package-lock.json
PEERS_ARQ := peers/arq/.venv/.installed

$(PEERS_BULLMQ): peers/bullmq/package.json peers/bullmq/package-lock.json
	@command -v npm >/dev/null || { echo "make peers needs Node.js and npm (BullMQ): sudo apt-get install -y nodejs npm"; exit 1; }
	cd peers/bullmq && npm ci --no-audit --no-fund --ignore-scripts

$(PEERS_ARQ): peers/arq/requirements.txt $(VENV)/bin/python
	$(BIN)/python -m venv peers/arq/.venv
	peers/arq/.venv/bin/python -m pip install -r peers/arq/requirements.txt
	touch $@

peers: $(STAMP) $(PEERS_BULLMQ) $(PEERS_ARQ)
	@command -v sidekiq >/dev/null || { echo "make peers needs Ruby's Sidekiq: sudo apt-get install -y ruby-sidekiq"; exit 1; }
	$(BIN)/python -m peers

# make browser  the whole browser suite with every notebook's run-and-axe check in Chromium
#               (make test runs those for 00 and 04 only, to stay within its time).
#               TRAFIKEY_BROWSER=rest runs only the checks make test leaves out: .ci/run's
#               choice, right after make test, so that no check runs twice
TRAFIKEY_BROWSER ?= all
browser: $(STAMP)
	TRAFIKEY_BROWSER=$(TRAFIKEY_BROWSER) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile \
		tests/browser

setup: $(STAMP)

doctor: $(STAMP)
	$(BIN)/python -m trafikey_lab doctor

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "trafikey lab needs Python 3.11 or newer: set PYTHON=python3.11 (or newer)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

# WHEELHOUSE=dir installs from a folder made by `make wheelhouse` alone: no index, no network.
PIP_SOURCE = $(if $(WHEELHOUSE),--no-index --find-links $(abspath $(WHEELHOUSE)))

# Reinstalled whenever the package's build inputs change, so the module is never stale.
$(STAMP): $(VENV)/bin/python pyproject.toml setup.py trafikey_lab/module/trafikey.c trafikey_lab/module/valkey_api.h
	$(BIN)/python -m pip install $(PIP_SOURCE) -e '.[lab,test]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info trafikey_lab/module/trafikey.so peers/bullmq/node_modules peers/arq/.venv

# make soak  the reliability suite with its long profiles (more sequences, steps, calls, kills)
soak: $(STAMP)
	TRAFIKEY_SOAK=1 $(BIN)/python -m pytest tests/reliability

# make mutants  each small bug of tools/mutants/catalogue.py put into a scratch copy of the tree,
#               built, and run against the tests that must catch it; fails if one survives
mutants: $(STAMP)
	$(BIN)/python tools/mutants/run.py

# make bench  the module against its fair scripted peer, side by side in one run (a few
#             minutes): writes docs/benchmarks.md and docs/benchmarks.png; asserts nothing
bench: $(STAMP)
	$(BIN)/python tools/bench.py

# make asan  the bad-input and differential suites against an AddressSanitizer build of the
# module, loaded into the real server through the no-DEEPBIND shim; fails on any ASan report
ASAN_DIR := build/asan
ASAN_CFLAGS := -fsanitize=address -fno-omit-frame-pointer -g -O1 -std=c11 -Wall -Wextra
asan: $(STAMP)
	@libasan=$$(gcc -print-file-name=libasan.so 2>/dev/null); \
	if [ "$${libasan#/}" = "$$libasan" ] || [ ! -e "$$libasan" ] || \
	   ! echo 'int main(void) { return 0; }' | gcc -fsanitize=address -x c - -o /dev/null 2>/dev/null; then \
		echo "make asan: this toolchain has no AddressSanitizer (gcc -fsanitize=address and its libasan.so)."; \
		echo "Install gcc with libasan (Debian/Ubuntu: apt-get install gcc libasan8) and run make asan again."; \
		exit 1; \
	fi
	rm -rf $(ASAN_DIR) && mkdir -p $(ASAN_DIR)/logs
	gcc $(ASAN_CFLAGS) -shared -fPIC -o $(ASAN_DIR)/trafikey.so trafikey_lab/module/trafikey.c
	gcc -O2 -Wall -Wextra -shared -fPIC -o $(ASAN_DIR)/nodeepbind.so tests/asan/nodeepbind.c -ldl
	@TRAFIKEY_TEST_MODULE=$(CURDIR)/$(ASAN_DIR)/trafikey.so \
	TRAFIKEY_TEST_SERVER_PRELOAD="$(CURDIR)/$(ASAN_DIR)/nodeepbind.so $$(gcc -print-file-name=libasan.so)" \
	TRAFIKEY_TEST_ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:abort_on_error=1:log_path=$(CURDIR)/$(ASAN_DIR)/logs/asan \
		$(BIN)/python -m pytest tests/reliability/test_bad_input.py tests/reliability/test_differential.py; \
	status=$$?; \
	if grep -l "AddressSanitizer" $(ASAN_DIR)/logs/* 2>/dev/null; then \
		cat $(ASAN_DIR)/logs/*; echo "make asan: AddressSanitizer reported errors (logs in $(ASAN_DIR)/logs)"; exit 1; \
	fi; \
	[ $$status -eq 0 ] && echo "make asan: suites passed, no AddressSanitizer report"; exit $$status

# make wheelhouse     a wheel of everything the lab installs (and builds with) in wheelhouse/,
#                     for this machine's platform and Python: prepared before a workshop
#                     with no network, then `make lab WHEELHOUSE=wheelhouse` in the room
# make offline-check  a fresh copy installed from wheelhouse/ alone (no index, no pip config,
#                     no network), then the doctor
wheelhouse: $(VENV)/bin/python
	$(BIN)/python tools/wheelhouse.py build wheelhouse

offline-check: $(VENV)/bin/python
	$(BIN)/python tools/wheelhouse.py check wheelhouse

# make binder-check   a rehearsal of a Binder session: binder/postBuild run as an unprivileged
#                     user in a fresh copy and a fresh environment with Binder's Python, then
#                     JupyterLab started as Binder starts it, the README's Binder links and
#                     the browser tests of notebooks 00 and 04 against it
binder-check: $(STAMP)
	$(BIN)/python tools/binder_check.py

# make book        the course as a static site in book/_build/html (Jupyter Book 1): the
#                  notebooks as stored, not run; the widget renderer and the page's Python
#                  runtime (thebe, thebe-lite, Pyodide) from book/package-lock.json (npm ci),
#                  its wheels from the package index (pip download, kept in book/_build/wheels),
#                  all served by the site itself; and 07's decision table as a one-page sheet,
#                  HTML and a PDF Chromium prints (tools/decision_sheet.py). Where it is
#                  published: book/publish.toml
# make book-check  make book, then every page in headless Chromium with the network cut off
#                  (tests/book_site): widgets rendered, alt text, links, launch buttons, axe,
#                  the sheet and its PDF, and the course's Python run in the pages of 00, 01,
#                  04 and 05; a full run writes the page's timings into docs/benchmarks.md
# make linkcheck   the external links of the book, fetched (needs a network; not in make test)
BOOK_STAMP := $(VENV)/.installed-book
BOOK_RENDERER := book/node_modules/.package-lock.json

$(BOOK_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install $(PIP_SOURCE) -e '.[book]'
	touch $(BOOK_STAMP)

$(BOOK_RENDERER): book/package.json book/package-lock.json
	cd book && npm ci --no-audit --no-fund --ignore-scripts

book: $(BOOK_STAMP) $(BOOK_RENDERER)
	$(BIN)/python tools/book.py build

book-check: book
	TRAFIKEY_BOOK_SITE=$(CURDIR)/book/_build/html $(BIN)/python -m pytest tests/book_site

linkcheck: $(BOOK_STAMP)
	$(BIN)/python tools/book.py linkcheck

# make hub        JupyterHub for a workshop on a machine you own, as root (sudo make hub):
#                 the course's environment built once with Debian's /usr/bin/python3 from
#                 constraints.txt, PAM logins with learners as OS users (HUB_LEARNERS=N makes
#                 learner01... with passwords on a sheet), each learner's own server, the idle
#                 culler, the course by an nbgitpuller link. On 127.0.0.1 unless HUB_IP names
#                 another address (which needs HUB_SSL_CERT and HUB_SSL_KEY); all of it under
#                 HUB_PREFIX (/opt/trafikey-hub). Ctrl-C stops it. hub/workshop.py says more.
# make hub-check  a rehearsal of it on this machine, as root: HUB_LEARNERS (5) learners log
#                 in, pull the course and run notebooks 00 and 04 at once through the hub,
#                 one presses Run live in Chromium; isolation, the culler and a clean stop
#                 are checked, and the sizing figures printed (hub/rehearsal.py)
# make lock       constraints.txt from .venv, the versions make test passed with: what Binder,
#                 the hub and the wheelhouse install; it says what moved (tools/lock.py)
HUB_PYTHON ?= /usr/bin/python3
HUB_IP ?= 127.0.0.1
HUB_PORT ?= 8000
HUB_PREFIX ?= /opt/trafikey-hub
hub:
	$(HUB_PYTHON) hub/workshop.py serve --prefix $(HUB_PREFIX) --ip $(HUB_IP) --port $(HUB_PORT) \
		--learners $(or $(HUB_LEARNERS),0) $(if $(HUB_URL),--url $(HUB_URL)) \
		$(if $(HUB_SSL_CERT),--ssl-cert $(HUB_SSL_CERT) --ssl-key $(HUB_SSL_KEY)) \
		$(if $(HUB_ADMINS),--admins $(HUB_ADMINS)) $(if $(HUB_COURSE_REPO),--course-repo $(HUB_COURSE_REPO))

hub-check: $(STAMP)
	$(BIN)/python hub/rehearsal.py --learners $(or $(HUB_LEARNERS),5)

lock: $(STAMP)
	$(BIN)/python tools/lock.py constraints.txt
