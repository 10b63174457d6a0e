# Two commands do all the set-up on a fresh machine:
#   make book   builds the website into _build/html
#   make test   runs every test layer (lint, lincls, homework, book build, student site)
#   make student-book  builds the student edition (no solutions) into _build/student/html
SHELL := /bin/bash
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
export PATH := $(abspath $(BIN)):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
BOOK_FLAGS := -n -W --keep-going
NBVAL := --nbval -p no:cacheprovider --nbval-sanitize-with tests/sanitize.cfg

.PHONY: book test lint unit homework release book-clean student-book student-test bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-book: requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed-book
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

## make book: build the website (cached execution) into _build/html
book: $(VENV)/.installed-book
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)

## make test: all test layers, in order
test: $(VENV)/.installed-dev
	$(MAKE) --no-print-directory lint unit homework release book-clean student-book student-test

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

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks

clean:
	rm -rf _build .pytest_cache
