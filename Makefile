# Two commands set everything up on a fresh machine:
#   make demo   creates .venv, installs dbspc, and runs the example views through a few steps
#   make test   creates .venv, installs dbspc with its test tools, and runs the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench setup check-java check-browser conformance docs

$(BIN)/dbspc: pyproject.toml setup.py $(wildcard runtime/native/*.pyx)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "dbspc needs Python 3.11 or newer")'
	@command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || { echo "error: dbspc's kernels are compiled at install: a C++ compiler is needed (apt-get install -y g++)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $(BIN)/dbspc

setup: $(BIN)/dbspc

check-java:
	@command -v java >/dev/null 2>&1 || { echo "error: java not found. Spark needs Java 17: apt-get install -y openjdk-17-jre-headless"; exit 1; }

# The circuit pages are tested in a real headless browser: Debian's chromium, installed
# here when missing (about 25 s); without apt-get the browser test is skipped, saying so.
check-browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  (apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && \
	   apt-get install -y -q chromium >/dev/null 2>&1)) || echo "warning: chromium not installed; the browser test will be skipped"; }

demo: setup check-java
	$(BIN)/dbspc compile examples/orders.sql
	$(BIN)/dbspc run examples/orders.sql
	$(BIN)/python examples/spark_demo.py

# Each part runs on its own and reports its wall time at the end (.ci/timed): the developer
# loop is `pytest -m "not slow and not cluster"`; the cluster tests start their own two-executor
# Spark cluster (one SparkContext per process, so never beside the spark tests); the conformance files are many small tests spread over both
# xdist workers as they free up (--dist load).
PYTEST := $(BIN)/python -m pytest
export TEST_TIMES := $(VENV)/test-times.tsv

test: setup check-java check-browser
	@: > $(TEST_TIMES)
	@.ci/timed ruff $(BIN)/ruff check setup.py compiler runtime slt dbspc/__init__.py dbspc/cli.py dbspc/pytest_plugin.py cli.py tests bench examples docs/gen_reference.py
	@.ci/timed mypy $(BIN)/mypy -p dbspc
	@.ci/timed docs $(BIN)/mkdocs build --strict --quiet
	@.ci/timed "pytest fast" $(PYTEST) -n 2 -m "not slow and not spark and not cluster" tests
	@.ci/timed "pytest spark" $(PYTEST) -m "spark" tests
	@.ci/timed "pytest cluster" $(PYTEST) -m "cluster" tests
	@.ci/timed "pytest slow (conformance)" $(PYTEST) -n 2 --dist load -m "slow and not spark" tests
	@.ci/timed --report

# The docs site (mkdocs, material theme) in .site/; the SQL reference and the worked
# example's picture are regenerated from the compiler first.
docs: setup
	PYTHONPATH=. $(BIN)/python docs/gen_reference.py
	$(BIN)/mkdocs build --strict

bench: setup
	$(BIN)/python bench/join_groupby.py

# The whole sqllogictest corpus (select1-5, evidence, random/*), one file at a time, each in
# a child process; ends with the Markdown table of docs/conformance.md and the wall time.
# About 100 minutes on one core.
CORPUS ?= ../shared/conformance/sqllogictest
conformance: setup
	@.ci/timed-conformance $(BIN)/dbspc slt --table $(CORPUS)
