# Two commands do all the set-up on a fresh machine:
#   make book   builds the website into _build/html
#   make test   runs every test layer (lint, lincls, homework, book build, student site,
#               browser)
#   make student-book  builds the student edition (no solutions) into _build/student/html
SHELL := /bin/bash
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
export PATH := $(abspath $(BIN)):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
BOOK_FLAGS := -n -W --keep-going
NBVAL := --nbval -p no:cacheprovider --nbval-sanitize-with tests/sanitize.cfg

.PHONY: book test lint unit homework release book-clean student-book student-test browser \
        chromium bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-book: requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed-book
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

# Local copies of the website's CDN assets (MathJax, require.js, the ipywidgets HTML
# manager) at the exact versions pinned in tests/browser/package.json, fetched from the
# npm registry with npm. tests/test_browser.py serves them to Chromium in place of the CDN.
VENDOR := $(VENV)/vendor
$(VENDOR)/.installed: tests/browser/package.json | $(PY)
	rm -rf $(VENDOR) && mkdir -p $(VENDOR)
	@command -v npm >/dev/null || { echo "npm not found: browser tests will skip"; exit 0; }; \
	for spec in $$($(PY) -c 'import json, sys; print(*(f"{k}@{v}" for k, v in json.load(open(sys.argv[1]))["dependencies"].items()))' $<); do \
	  name=$${spec%@*}; mkdir -p $(VENDOR)/$$name; \
	  tgz=$$(cd $(VENDOR) && npm pack --silent --pack-destination . $$spec) && \
	  tar -xzf $(VENDOR)/$$tgz -C $(VENDOR)/$$name --strip-components=1 && rm $(VENDOR)/$$tgz || exit 1; \
	done; touch $@

## make chromium: install Debian's chromium for the browser tests (only as root with apt)
chromium:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq chromium >/dev/null \
	  || echo "apt-get could not install chromium: browser tests will skip (fail under CI=true)"; \
	else echo "chromium missing, and not root with apt: browser tests will skip (fail under CI=true)"; fi

## make book: build the website (cached execution) into _build/html
book: $(VENV)/.installed-book
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)

## make test: all test layers, in order
test: $(VENV)/.installed-dev
	$(MAKE) --no-print-directory lint unit homework release book-clean student-book student-test \
	  browser

lint:
	$(BIN)/ruff check .

unit:
	$(BIN)/pytest

## homework: nbval on the teacher notebooks, twice: their outputs must be reproducible
homework:
	$(BIN)/pytest $(NBVAL) book/homework
	$(BIN)/pytest $(NBVAL) book/homework

## release: validate and release the homework; the student versions must check, run
## (exercises aside) and hold no solution
release:
	$(PY) -m lincls.homework check book/homework
	$(PY) -m lincls.homework release book/homework _build/release/homework
	$(BIN)/pytest -m homework tests

## make student-book: the student edition into _build/student/html (after `make book`
## it reuses the execution cache). STUDENT_REPO=<url> points its Binder links there.
student-book: $(VENV)/.installed-book
	$(PY) -m lincls.homework student-book $(if $(STUDENT_REPO),--repository-url $(STUDENT_REPO))

student-test:
	$(BIN)/pytest -m student_site tests

book-clean:
	rm -rf _build
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)
	$(BIN)/pytest -m site tests/test_site.py

## make browser: the built site in headless Chromium, and the Binder path in JupyterLab
browser: $(VENV)/.installed-dev $(VENDOR)/.installed chromium
	$(BIN)/pytest -m browser --timeout 600 tests/test_browser.py tests/test_jupyterlab.py

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks

clean:
	rm -rf _build .pytest_cache
