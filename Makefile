# One-command habits. `make test` and `make demo` do all set-up on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The MCP Inspector CLI (npm, pinned in package-lock.json), an external MCP client for the tests.
INSPECTOR := node_modules/.bin/mcp-inspector

.PHONY: install lint typecheck test demo bench eval clean

install: $(STAMP) $(INSPECTOR)
	@sh scripts/install-system-deps.sh  # Prometheus and PostgreSQL, when missing

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# npm ci leaves the packages' own (old) mtimes, so touch the CLI to record this install. Without
# npm: a warning on a developer machine (the inspector test skips), an error in CI (`CI` set).
$(INSPECTOR): package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --no-audit --no-fund --loglevel=error >/dev/null && touch $@; \
	elif [ -n "$${CI:-}" ]; then \
		echo "make install: npm not found; install Node.js 20+ (needed for the MCP Inspector)" >&2; \
		exit 1; \
	else \
		echo "make install: npm not found; skipping the MCP Inspector (its test will skip)" >&2; \
	fi

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

test: install
	$(BIN)/pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=25

demo: install
	$(BIN)/kubecrew demo

bench: install
	$(BIN)/python -m benchmarks

# The eval corpus in deterministic mode; the report lands in evals/report/.
eval: install
	$(BIN)/kubecrew eval --jobs 2 --out evals/report

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
