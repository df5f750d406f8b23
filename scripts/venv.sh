# Sourced by run-tests and run-sim: create .venv and (re)install when pyproject.toml changed.
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    if ! python -m pip install -q -e '.[test]' >.venv/install.log 2>&1; then
        cat .venv/install.log >&2
        echo "install failed; see .venv/install.log" >&2
        exit 1
    fi
    rm -f .venv/.installed-*
    touch "$stamp"
fi
