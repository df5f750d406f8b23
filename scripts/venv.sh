# Sourced by run-tests and run-sim: create .venv and (re)install when pyproject.toml changed.
# Says what it does on stderr while it works (a first install took 37-41 s of pip in a fresh
# clone on a 2-core machine with a fast network: more on a slow link or a Pi), so a new user
# never stares at a silent terminal; says nothing when .venv is already up to date.
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
venv_started=$SECONDS
if [ ! -x .venv/bin/python ]; then
    echo "== first run: creating .venv with $("$PY" --version 2>&1) ($PY)" >&2
    "$PY" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    echo "== installing the project and its test tools into .venv (pip install -e '.[test]';" \
         "about 40 s on a fast network, minutes on a slow one; log in .venv/install.log)..." >&2
    if ! python -m pip install -q -e '.[test]' >.venv/install.log 2>&1; then
        cat .venv/install.log >&2
        echo "install failed; see .venv/install.log" >&2
        exit 1
    fi
    rm -f .venv/.installed-*
    touch "$stamp"
    echo "== .venv ready in $((SECONDS - venv_started)) s" >&2
fi
unset venv_started
