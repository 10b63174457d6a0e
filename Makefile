# Two commands do all the set-up on a fresh machine:
#   make book   builds the website into _build/html
#   make test   runs every test layer (lint, lincls, scikit-learn's tests on lincls, homework,
#               book build, PDFs, student site, browser, other Pythons and the route without make)
#   make student-book  builds the student edition (no solutions) into _build/student/html
#   make pdf / make student-pdf  the teacher / student edition as one PDF into _build/pdf
SHELL := /bin/bash
# The interpreter that creates .venv; pick another with `make book PYTHON=python3.12`.
PYTHON ?= python3
# The Python versions the pins in requirements.txt install on (pyproject's requires-python
# says the same; tests/test_pythons.py checks each one found on the machine).
PY_MIN := 3.11
PY_MAX := 3.13
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
export PATH := $(abspath $(BIN)):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
BOOK_FLAGS := -n -W --keep-going
NBVAL := --nbval -p no:cacheprovider --nbval-sanitize-with tests/sanitize.cfg

.PHONY: book test lint unit homework release book-clean student-book nbgrader student-test browser \
        pythons chromium poppler pdf student-pdf pdf-test bench clean sklearn

# Before any install, `make book`/`make test` stop with one line when the interpreter (the
# venv's, once it exists) is outside PY_MIN..PY_MAX. Plain `python -c`: any Python runs it.
PY_USED := $(if $(wildcard $(PY)),$(PY),$(PYTHON))
PY_FOUND = $(shell $(PY_USED) -c 'import sys; lo, hi = [tuple(map(int, v.split("."))) for v in sys.argv[1:]]; v = sys.version_info; print("ok" if lo <= v[:2] <= hi else "Python %d.%d.%d" % v[:3])' $(PY_MIN) $(PY_MAX) 2>/dev/null || echo "no working interpreter")
ifneq ($(filter book test student-book pdf student-pdf,$(or $(MAKECMDGOALS),book)),)
ifneq ($(PY_FOUND),ok)
$(error found $(PY_FOUND) at $(PY_USED); the book supports Python $(PY_MIN) to $(PY_MAX): pick one with e.g. make $(firstword $(MAKECMDGOALS) book) PYTHON=python$(PY_MAX))
endif
endif

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-book: requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed-book
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

# Local copies of the website's CDN assets (MathJax, require.js, the ipywidgets HTML
# manager) and axe-core at the exact versions pinned in tests/browser/package.json, fetched
# from the npm registry with npm. tests/test_browser.py serves them to Chromium in place of
# the CDN, and injects axe-core into every page.
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

## make poppler: install Debian's poppler-utils (pdfinfo, pdftotext, pdfimages) for the PDF
## tests (only as root with apt)
poppler:
	@if command -v pdfinfo >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq poppler-utils >/dev/null \
	  || echo "apt-get could not install poppler-utils: PDF tests will skip (fail under CI=true)"; \
	else echo "pdfinfo missing, and not root with apt: PDF tests will skip (fail under CI=true)"; fi

## make book: build the website into _build/html (every chapter executed, several side by side)
book: $(VENV)/.installed-book
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)

## make test: all test layers, in order
test: $(VENV)/.installed-dev
	$(MAKE) --no-print-directory lint unit sklearn homework release nbgrader book-clean pdf student-book \
	  student-pdf student-test pdf-test browser pythons

lint:
	$(BIN)/ruff check .

unit:
	$(BIN)/pytest

## sklearn: scikit-learn's own tests of the perceptron, logistic regression, SVMs, PCA, ridge
## (least squares) and SGD (Adaline), edited to run on lincls (see tests/sklearn_suite.py)
sklearn:
	$(BIN)/pytest -m sklearn_suite tests/test_sklearn_suite.py

## homework: nbval on the teacher notebooks, twice: their outputs must be reproducible
homework:
	$(BIN)/pytest $(NBVAL) book/homework
	$(BIN)/pytest $(NBVAL) book/homework

## release: validate and release the homework (student versions, and grading versions
## whose hidden tests hold the values of the teacher's solution); the student versions
## must validate, run (exercises aside) and hold no solution
release:
	$(PY) -m lincls.homework validate book/homework
	$(PY) -m lincls.homework release book/homework _build/release/homework \
	  --grading _build/release/grading
	$(BIN)/pytest -m homework tests

## nbgrader: the real nbgrader round trip (generate_assignment, autograde) on every homework
nbgrader:
	$(BIN)/pytest -m nbgrader --timeout 1800 tests/test_nbgrader.py

## make student-book: the student edition into _build/student/html (its chapters executed
## again, several side by side). STUDENT_REPO=<url> points its Binder links there;
## without it the student edition has no Binder, repository or issue button.
student-book: $(VENV)/.installed-book
	$(PY) -m lincls.homework student-book $(if $(STUDENT_REPO),--repository-url $(STUDENT_REPO))

## make pdf: the teacher edition (with solutions) as one PDF, _build/pdf/$(PDF); also copied
## into the website (_build/html), whose download menu links it. The single-page HTML build
## reuses the doctrees of `make book` (no second execution); Chromium prints it offline.
PDF := linear-classification.pdf
STUDENT_PDF := linear-classification-student.pdf
pdf: $(VENV)/.installed-dev $(VENDOR)/.installed chromium poppler
	$(BIN)/jupyter-book build . --builder singlehtml $(BOOK_FLAGS)
	$(PY) -m lincls.sphinxext.pdf _build/singlehtml _build/pdf/$(PDF) --copy-to _build/html

## make student-pdf: the student edition as one PDF, _build/pdf/$(STUDENT_PDF) (after
## `make student-book` it reuses its doctrees), also copied into _build/student/html
student-pdf: $(VENV)/.installed-dev $(VENDOR)/.installed chromium poppler
	$(PY) -m lincls.homework student-book --builder singlehtml \
	  $(if $(STUDENT_REPO),--repository-url $(STUDENT_REPO))
	$(PY) -m lincls.sphinxext.pdf _build/student/singlehtml _build/pdf/$(STUDENT_PDF) \
	  --copy-to _build/student/html

## pdf-test: both PDF editions open and hold every chapter, figure and no raw markup; the
## student one no solution
pdf-test:
	$(BIN)/pytest -m pdf tests/test_pdf.py

student-test:
	$(BIN)/pytest -m student_site tests

book-clean:
	rm -rf _build
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)
	$(BIN)/pytest -m site tests/test_site.py

## make browser: the built site (and the student site, after student-book) in headless
## Chromium with axe-core, keyboard and dark-mode checks, and the Binder path in JupyterLab
## (after `make pdf`: every page's download menu links the book's PDF)
browser: $(VENV)/.installed-dev $(VENDOR)/.installed chromium pdf
	$(BIN)/pytest -m browser --timeout 600 tests/test_browser.py tests/test_jupyterlab.py

## make pythons: a fresh venv on every other supported Python found (lincls tests, one
## chapter), the one-line refusal of older ones, and the README's route without make
pythons: $(VENV)/.installed-dev
	$(BIN)/pytest -m pythons -v -rs --timeout 3600 tests/test_pythons.py

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks

clean:
	rm -rf _build .pytest_cache
