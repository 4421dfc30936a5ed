#!/usr/bin/env bash
# The corpus's client cases over Connect and gRPC-web: starts the reference server itself
# (`$PI_PROTO serve --conformance CORPUS --port 0 --http-port 0`), reads the two addresses it
# prints, runs conformance/runner.ts over the client cases with each protocol of PROTOCOLS against
# them (connect and grpc-web at the HTTP port, grpc at the gRPC one), and stops the server
# whatever happens.
#
#   PI_PROTO=/abs/path/of/pi-proto CORPUS=/abs/dir KNOWN_FAILURES=/abs/file \
#     [PROTOCOLS="connect grpc-web"] bash scripts/conformance-http.sh
set -euo pipefail

: "${PI_PROTO:?set PI_PROTO to the absolute path of the pi-proto command}"
: "${CORPUS:?set CORPUS to the absolute folder of the conformance corpus}"
: "${KNOWN_FAILURES:?set KNOWN_FAILURES to the known failures file of this runtime}"
PROTOCOLS="${PROTOCOLS:-connect grpc-web}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" # typescript/
fail() { echo "conformance-http: $*" >&2; exit 1; }
[ -x "$PI_PROTO" ] || fail "PI_PROTO=$PI_PROTO is not an executable"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The server prints `listening on HOST:PORT` (gRPC), then `http on HOST:PORT`.
mkfifo "$work/server.out"
"$PI_PROTO" serve --conformance "$CORPUS" --port 0 --http-port 0 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
exec 3<"$work/server.out"
read -r -t 60 first <&3 || fail "$PI_PROTO serve printed no first line: $(cat "$work/server.err")"
[[ "$first" =~ ^listening\ on\ ([^[:space:]]+:[0-9]+)$ ]] || fail "unexpected first line from serve: $first"
grpc_target="${BASH_REMATCH[1]}"
read -r -t 60 second <&3 || fail "$PI_PROTO serve printed no http line: $(cat "$work/server.err")"
[[ "$second" =~ ^http\ on\ ([^[:space:]]+:[0-9]+)$ ]] || fail "unexpected second line from serve: $second"
http_target="${BASH_REMATCH[1]}"
cat <&3 >/dev/null & # keep draining the server's stdout

args=(--corpus "$CORPUS" --known-failures "$KNOWN_FAILURES" --only client)
args+=(--server "$grpc_target" --http-server "$http_target")
for protocol in $PROTOCOLS; do args+=(--protocol "$protocol"); done
cd "$here"
node --import tsx conformance/runner.ts "${args[@]}"
