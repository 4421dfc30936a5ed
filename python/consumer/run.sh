#!/usr/bin/env bash
# A new user's first steps with the wheel, in a folder outside the repository: the library alone
# runs the README's Python examples; the command says it needs the `cli` extra; with the extra it
# serves and streams the README trip.
# Usage: python/consumer/run.sh DIST (the folder `make dist-python` filled)
set -euo pipefail
DIST="$(cd "$1" && pwd)"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VERSION="$(cat "$ROOT/VERSION")"
# The install lines below are the README's, with the version written out: they must name this one.
grep -q "pi_proto-$VERSION-py3" "$0" || { echo "$0: the install lines do not name version $VERSION" >&2; exit 1; }
export PIP_CONSTRAINT="$ROOT/constraints.txt" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_QUIET=1
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"

# README install: begin
python3 -m venv .venv
.venv/bin/pip install "$DIST/pi_proto-0.2.0-py3-none-any.whl"          # the library
# README install: end
.venv/bin/python "$HERE/readme_examples.py" "$ROOT/README.md"

if .venv/bin/pi-proto serve --port 0 2>err.txt; then
  echo "pi-proto ran without its extra" >&2; exit 1
fi
grep -q "pip install 'pi-proto\[cli\]'" err.txt || { cat err.txt >&2; exit 1; }

# README install: begin
.venv/bin/pip install "$DIST/pi_proto-0.2.0-py3-none-any.whl[cli]"     # and the command
# README install: end
.venv/bin/pi-proto serve --port 0 >served.txt 2>/dev/null &
server=$!
for _ in $(seq 600); do grep -q "listening on" served.txt 2>/dev/null && break; sleep 0.1; done
target="$(sed -n 's/^listening on //p' served.txt)"
.venv/bin/pi-proto stream --target "$target" "请读取 README" >streamed.txt
grep -q "我先读取项目说明。" streamed.txt || { cat streamed.txt >&2; exit 1; }
kill "$server"; wait "$server" 2>/dev/null || true; server=""

# The web page ships built inside the wheel: with the http extra, `serve --http-port` serves it.
.venv/bin/pip install "$DIST/pi_proto-$VERSION-py3-none-any.whl[cli,http]"
.venv/bin/pi-proto serve --port 0 --http-port 0 >served.txt 2>/dev/null &
server=$!
for _ in $(seq 600); do grep -q "http on" served.txt 2>/dev/null && break; sleep 0.1; done
http="$(sed -n 's/^http on //p' served.txt)"
.venv/bin/python - "http://$http" <<'PY'
import sys, urllib.request
for path, kind in (("/", "text/html"), ("/ui/app.js", "text/javascript"), ("/ui/app.css", "text/css")):
    with urllib.request.urlopen(sys.argv[1] + path, timeout=30) as answer:
        assert answer.headers["content-type"].startswith(kind), (path, answer.headers["content-type"])
        assert len(answer.read()) > 100, path
PY
echo "python: the wheel installs, its README examples run, pi-proto serves and streams, and serves the web page"
