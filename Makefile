# Two commands do everything on a fresh machine with Python 3.11 (see README.md):
#   make book   -- virtual environment, pinned requirements, browser assets, execute every chapter, build _build/html
#   make test   -- library tests, the build's execution of every chapter (fresh kernel each), site tests and
#                  the real-browser tests
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
SITE   := _build/html/index.html
# The whole book for print and e-readers (make pdf, make epub; set here, before the rules that need them)
PDF    := _build/print/attention-book.pdf
EPUB   := _build/print/attention-book.epub
# Nothing at build or test time may use the network (there is none on CI); make that explicit for HF libraries.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# The optional online cells (GPT-2, bert-base from the hub) never run in a build or test.
export BOOK_ONLINE :=
export PYTHONHASHSEED := 0
# One CPU kernel path for every build, test and chapter run, whichever x86 processor does them (issue 34):
# PyTorch's AVX2 kernels, MKL's COMPATIBLE branch of conditional numerical reproducibility and oneDNN capped at
# AVX2 (lib/__init__.py also keeps nn.LSTM off oneDNN). By default an AVX-512 Xeon or EPYC (Zen 4) and an AVX2
# EPYC (Zen 3) sum in different orders, and numbers that come out of training (the ones the text quotes)
# differ in their last digits. MKL's AVX2 branch is the same code on every Intel processor only: on an AMD
# one MKL takes its AUTO branch instead (MKL's documentation), and an Intel Xeon trained chapters 3, 5, 9 and
# 12 to other numbers than the AMD EPYC that wrote the text. COMPATIBLE (SSE2) is the one branch MKL keeps
# the same on Intel and AMD. tests/conftest.py sets the same three for a pytest run started by hand.
# `make test-kernels` runs the suite on the others.
export ATEN_CPU_CAPABILITY ?= avx2
export MKL_CBWR ?= COMPATIBLE
export ONEDNN_MAX_CPU_ISA ?= AVX2
# make test runs the test files on this many pytest-xdist workers, a file to a worker (its module
# fixtures, a browser or a graded course, are made once); the build machine has 2 cores.
TEST_WORKERS ?= 2
# make book executes the chapters this many at a time, torch on one thread each (tools/chapter_cache.py:
# a chapter keeps a second thread mostly idle; two at a time halve the build's longest step here).
CHAPTER_JOBS ?= 2

BOOK_SOURCES := _config.yml _toc.yml $(wildcard book/*.md book/_ext/*.py notebooks/*.ipynb lib/*.py lib/*/*.py)


.PHONY: help book test serve venv assets browser clean live-models playground-graphs test-lib test-kernels test-notebooks test-site chapter-times sync student bench slides course lint format pdf epub print publish serve-published

help:
	@echo "make book    build the site into _build/html (creates .venv, installs everything, executes the chapters)"
	@echo "make test    run every test: library, the build's run of every chapter, built site, real browser"
	@echo "make serve   serve _build/html on http://localhost:8000"
	@echo "make publish check that _build/html is ready for its address (html.baseurl in _config.yml); PUBLISH_DIR=dir copies it there"
	@echo "make serve-published   serve _build/html at its published path, http://127.0.0.1:8000/attention-book/"
	@echo "make chapter-times   execute each chapter in a fresh kernel and print its wall time"
	@echo "make student write the student edition: student/<chapter>.ipynb without the solutions, with where they are on the site (SOLUTIONS=0: with none)"
	@echo "make test-kernels    the library tests on other CPU kernel paths (KERNEL_CHAPTERS=1: and every chapter)"
	@echo "make lint    ruff: format check and lint (make format fixes what it can)"
	@echo "make pdf     the whole book as one PDF (_build/print/attention-book.pdf, Chromium prints the single-page build)"
	@echo "make epub    the whole book as an ePub (_build/print/attention-book.epub), checked by epubcheck"
	@echo "make slides  rewrite the reveal.js deck of every chapter into _build/html/slides (make book does it too; EXCLUDE_ANSWERS=1 without what answers a graded exercise)"
	@echo "make course  write the nbgrader course into course/ (GRADED=1 for a graded one; see the For teachers page)"
	@echo "make book SOLUTIONS=0   the site, PDF and ePub without worked solutions and model answers"
	@echo "make playground-graphs   after a change to the Playground's code: export its graphs, rewrite tools/playground-graphs.tar.xz"
	@echo "make bench   run the benchmarks (speed against torch's kernels and a reference GPT, the book's times) -> benchmarks/results.md"
	@echo "             BENCH_BOOK=chapters|build|1 also re-measures the chapters / cold build and rebuild (long)"

venv: $(VENV)/.installed
$(VENV)/.installed: requirements.txt pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 not found"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (attention-book)" >/dev/null
	touch $@

assets: node_modules/.installed
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Debian's Chromium and its driver, for the real-browser test, and poppler-utils, whose pdftoppm renders
# the PDF's pages for tests/site/test_print_pdf.py. Installed only when missing.
browser:
	@missing=""; \
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || missing="chromium chromium-driver"; \
	command -v pdftoppm >/dev/null || missing="$$missing poppler-utils"; \
	if [ -n "$$missing" ]; then SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q $$missing; fi

sync: venv
	$(PY) tools/sync_colab_cell.py

# The models of the live figures, exported from lib to ONNX (tools/export_models.py; never committed),
# and the Playground's graph sets: extracted from tools/playground-graphs.tar.xz where its source hash
# is current, exported otherwise (tools/export_playground.py; 20 minutes of a 2-core machine for all).
LIVE := _build/live/models/manifest.json
live-models: $(LIVE)
$(LIVE): $(VENV)/.installed tools/export_models.py tools/export_playground.py tools/playground-graphs.tar.xz \
         $(wildcard lib/*.py lib/*/*.py lib/checkpoints/*.safetensors)
	$(PY) tools/export_playground.py --out _build/live
	$(PY) tools/export_models.py --out _build/live

# After a change to the Playground's code: export the changed sets and write the archive to commit.
playground-graphs: $(VENV)/.installed
	$(PY) tools/export_playground.py --out _build/live --pack

# SOLUTIONS=0 (make book SOLUTIONS=0): the site, the PDF and the ePub without the exercises' worked
# solutions, their verdicts and the model answers, for a course's own copy (book/_ext/exercises.py; the
# For teachers page). The stamp rebuilds the site when the setting changes; make test checks the book's
# own build, with them.
SOLUTIONS ?= 1
export BOOK_SOLUTIONS := $(SOLUTIONS)
SOLUTIONS_STAMP := _build/.solutions-$(SOLUTIONS)
$(SOLUTIONS_STAMP):
	mkdir -p _build && rm -f _build/.solutions-* && touch $@

# The site, then the whole book as PDF and ePub (linked from its home page; see pdf and epub below).
book: $(SITE) $(PDF) $(EPUB)
$(SITE): $(VENV)/.installed node_modules/.installed $(LIVE) $(BOOK_SOURCES) $(SOLUTIONS_STAMP) $(wildcard web/src/*.js web/src/*.css web/src/*/*.js) \
          book/references.bib tools/make_slides.py $(wildcard tools/slides/*/*) $(wildcard slides/*.md)
	$(PY) tools/sync_colab_cell.py --check
	$(PY) tools/chapter_cache.py --jobs $(CHAPTER_JOBS)
	$(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going
	@test -f $(SITE)

# One pytest run: library tests, the build's execution of every chapter (tests/site/test_chapters_executed.py:
# each chapter's current code ran in a fresh kernel against the current lib, every cell, no error; the build
# itself fails on a cell that raises; their times against the 90 s budget are make bench's, section 5), the built-site tests and the real-browser tests.
# pytest's exit code 5 (no test collected) is a failure here.
test: venv assets browser $(SITE) $(PDF) $(EPUB) lint
	$(PY) tools/sync_colab_cell.py --check
	$(PY) -m pytest tests -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 \
	  --junitxml=_build/test-report.xml -p no:cacheprovider; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test: pytest collected no test" >&2; exit 1; fi; exit $$rc

test-lib: venv
	$(PY) -m pytest tests -m "not site and not browser" -q

# The library's tests and (KERNEL_CHAPTERS=1) every chapter's own asserts on other CPU kernel paths than the
# book's AVX2 path (above): PyTorch's CPU dispatch forced to plain C++ with MKL's SSE2 branch, and this
# machine's own kernels (AVX-512 on a Xeon or a Zen 4). Each changes float32 results bitwise; a bound that
# holds on one processor only fails here first (tests/tolerance.py says how bounds are chosen). On those
# paths a chapter may print lib.prose's notes (trained numbers in their last digits) but must not fail.
NATIVE = $(shell env -u ATEN_CPU_CAPABILITY $(PY) -c 'import torch; print(torch.backends.cpu.get_cpu_capability().lower())')
KERNEL_PATHS = "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=SSE41" \
               "ATEN_CPU_CAPABILITY=$(NATIVE) MKL_CBWR=AUTO ONEDNN_MAX_CPU_ISA=ALL"
test-kernels: venv
	@for path in $(KERNEL_PATHS); do \
	  echo "== kernel path: $$path ($$(env $$path $(PY) -c 'import torch; print(torch.backends.cpu.get_cpu_capability())'))"; \
	  env $$path $(PY) -m pytest tests -m "not site and not browser" -n $(TEST_WORKERS) --dist loadfile -q -p no:cacheprovider || exit 1; \
	  if [ -n "$(KERNEL_CHAPTERS)" ]; then env $$path $(PY) tools/time_chapters.py --no-budget || exit 1; fi; \
	done

test-notebooks: venv
	$(PY) -m pytest --nbval-lax --nbval-cell-timeout=120 notebooks -q

test-site: venv browser $(SITE) $(PDF) $(EPUB)
	$(PY) -m pytest tests -m "site or browser" -q

# The student edition: every chapter without its solution cells (tagged "solution"), outputs cleared;
# a note where they were says where they are on the site. SOLUTIONS=0 (a course whose own site leaves
# them out): the notes name no site and say that the teacher has them.
student: venv
	$(PY) tools/make_student_edition.py $(if $(filter 0,$(SOLUTIONS)),--answers-withheld)

chapter-times: venv
	$(PY) tools/time_chapters.py

# Benchmarks (benchmarks/run.py): side-by-side timings, written to benchmarks/results.md. BENCH_THREADS sets torch's
# threads (default 1); BENCH_BOOK=chapters|build|1 re-measures the chapters and/or the cold and unchanged builds.
# Speed is measured on the machine's own kernels (the AVX2 path above is for the digits, not the speed).
bench: venv
	env -u ATEN_CPU_CAPABILITY -u MKL_CBWR -u ONEDNN_MAX_CPU_ISA $(PY) -m benchmarks.run

# Print and e-readers (tools/print_book.py says how and why): the single-page build printed by Debian's
# Chromium, and Sphinx's ePub made valid EPUB 3 (scripts out, pictures as files, equations as SVG, bertviz views
# photographed from the built site by the same Chromium, a navigation of every part and chapter) and
# checked by Debian's epubcheck. Both are copied into the site (_build/html/print/), whose home page
# links them; `make book` builds them after the site, `make test` checks them (tests/site/test_print.py).
# The site's content, summed (tools/print_book.py digest): rewritten only when the built site changed, so a
# rebuild that changes nothing a reader sees does not print the PDF and the ePub again.
DIGEST := _build/site-content.sha256
$(DIGEST): $(SITE)
	$(PY) tools/print_book.py digest --out $@

pdf: $(PDF)
$(PDF): $(DIGEST) tools/print_book.py tools/print/pdf.css tools/print/prepare.js book/_static/book.css | browser
	$(BIN)/jupyter-book build . --builder singlehtml --keep-going
	$(PY) tools/print_book.py pdf --out $(PDF)
	mkdir -p _build/html/print && cp $(PDF) _build/html/print/

epub: $(EPUB)
$(EPUB): $(DIGEST) tools/print_book.py | browser
	@command -v epubcheck >/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && $$SUDO apt-get install -y -q epubcheck; }
	rm -rf _build/epub
	$(PY) tools/print_book.py epub-config --out _build/epub-config/_config.yml
	$(BIN)/jupyter-book build . --config _build/epub-config/_config.yml --builder custom --custom-builder epub --keep-going
	$(PY) tools/print_book.py epub --out $(EPUB)
	java -jar /usr/share/java/epubcheck.jar $(EPUB)
	mkdir -p _build/html/print && cp $(EPUB) _build/html/print/

print: pdf epub

serve: $(SITE)
	$(PY) -m http.server --directory _build/html --bind 127.0.0.1 8000

# Publishing (README, "Publishing the book"): after `make book` and `make test`, check that the built site,
# with the PDF and ePub in its print/, is ready for its address, html.baseurl in _config.yml (a sitemap and
# canonical links under it, no absolute path, no link to a loopback server: tools/publish.py), and write
# .nojekyll. PUBLISH_DIR=<folder> then copies it there (a web server's root, a branch a host publishes).
# .github/workflows/pages.yml runs make book, make test and make publish, and deploys _build/html to
# GitHub Pages.
publish: $(SITE) $(PDF) $(EPUB)
	$(PY) tools/publish.py check $(if $(PUBLISH_DIR),--to "$(PUBLISH_DIR)")

# The site at the path it is published under (GitHub Pages serves it under /<repository>/, not at a root).
serve-published: $(SITE)
	$(PY) tools/publish.py serve

clean:
	rm -rf _build

# The slide decks (make book writes them too; this rewrites them from the executed chapters of the last build).
# EXCLUDE_ANSWERS=1 leaves out the figures, tables and sections that answer a graded exercise (--exclude-answers).
slides: $(SITE)
	$(PY) tools/make_slides.py $(if $(EXCLUDE_ANSWERS),--exclude-answers)

# The nbgrader course (tools/make_course.py): course/source/<chapter>/<chapter>.ipynb and nbgrader_config.py;
# EXCHANGE=/srv/nbgrader/exchange puts nbgrader's exchange outside the clone (the For teachers page);
# GRADED=1 writes a graded course (--predictions-at-collection --private-cases; private seeds are kept);
# VARIANTS=1 gives each student their own numbers (--variants); CHAPTERS="02 09" writes those chapters only;
# with GRADED=1, a prediction's test is worth 0 points (--prediction-points, default 0): PREDICTION_POINTS=1
# when the predictions are made in a supervised lab. WORKED_SOLUTIONS=allowed|zero|flag: what the grader
# does with a code answer that is the book's worked solution (--worked-solutions, default flag).
course: venv
	$(PY) tools/make_course.py --out course $(if $(EXCHANGE),--exchange $(EXCHANGE)) $(if $(GRADED),--predictions-at-collection --private-cases $(if $(PREDICTION_POINTS),--prediction-points $(PREDICTION_POINTS))) $(if $(VARIANTS),--variants) $(if $(WORKED_SOLUTIONS),--worked-solutions $(WORKED_SOLUTIONS)) $(CHAPTERS)

# ruff (pyproject.toml): every file of lib, tests, tools, benchmarks, the extensions and the chapters
# formatted and lint-clean at 100 characters a line. `make test` runs `make lint` first.
lint: venv
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

format: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
