# Two entry points: `make demo` and `make test`; `make check` runs the linter and the type checker. All create .venv when needed.
PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow check check-python venv clean

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null || { \
	  echo "error: histeg needs Python 3.12 or newer (sys.monitoring); '$(PYTHON)' is $$($(PYTHON) --version 2>&1 || echo 'not found'). Install 3.12+ or run 'make PYTHON=python3.12 ...'." >&2; exit 1; }

$(STAMP): pyproject.toml setup.py $(wildcard histeg/tracing/*.c histeg/tracing/*.h histeg/traces/*.c)
	@[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	@$(VPY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' || { \
	  echo "error: $(VENV) was made with Python older than 3.12; remove it ('make clean') and retry." >&2; exit 1; }
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e '.[test,cluster]'
	$(VPY) -m compileall -q histeg  # the tracer's modules load from their bytecode in every traced process
	@touch $(STAMP)

venv: check-python $(STAMP)

demo: check-python $(STAMP)
	$(VENV)/bin/histeg demo --dir demo-out

# One pytest worker per core (pytest-xdist); each module's tests stay on one worker, so its
# module-scoped fixtures are made once. PYTEST_ARGS="-n 0" runs everything in one process.
XDIST ?= -n auto --dist loadfile

test: check-python $(STAMP)
	$(VPY) -m pytest -m "not slow" $(XDIST) $(PYTEST_ARGS)

# Tests that take long (environments made with uv, timeouts, killed processes, properties over
# random histories); CI runs them too.
test-slow: check-python $(STAMP)
	$(VPY) -m pytest -m slow $(XDIST) $(PYTEST_ARGS)

# Lint and types (settings and pinned versions in pyproject.toml); .ci/run calls it after the tests.
check: check-python $(STAMP)
	$(VENV)/bin/ruff check histeg
	$(VENV)/bin/ruff format --check histeg
	$(VPY) -m mypy

clean:
	rm -rf $(VENV) .venv-* build *.egg-info
