#!/usr/bin/env bash
# Proves the schema archive the way a C++ user meets it: in a fresh folder outside the repository,
# extract pi-proto-schema-<version>.tar.gz, generate C++ with buf.gen.yaml, compile stream.cc with
# g++, and run it against a real `pi-proto serve`, checking the README trip.
#
#   DIST=/abs/dist PI_PROTO=/abs/pi-proto bash cpp/consumer.sh    (or: make -C cpp consumer ...)
#
# Needs buf, g++, pkg-config and Debian's protobuf/gRPC packages on PATH (make -C cpp setup).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${DIST:?set DIST to the absolute folder holding pi-proto-schema-<version>.tar.gz}"
: "${PI_PROTO:?set PI_PROTO to the absolute path of the pi-proto command}"
version="$(cat "$here/../VERSION")"

fail() { echo "cpp consumer: FAIL: $*" >&2; exit 1; }

# The install lines below name the archive literally, as a user types them: keep them in step.
grep -q "pi-proto-schema-$version.tar.gz" "$here/consumer.sh" || fail "the install lines do not name pi-proto-schema-$version.tar.gz"
[ -f "$DIST/pi-proto-schema-$version.tar.gz" ] || fail "$DIST/pi-proto-schema-$version.tar.gz is missing (make dist-schema DIST=$DIST)"
[ -x "$PI_PROTO" ] || fail "PI_PROTO=$PI_PROTO is not an executable"
for tool in buf g++ pkg-config protoc grpc_cpp_plugin; do
  command -v "$tool" >/dev/null || fail "$tool is not on PATH (make -C cpp setup; buf comes from the repository's .venv)"
done

work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
case "$work" in "$(dirname "$here")"/*) fail "the temporary folder $work is inside the repository" ;; esac

# What a user has besides the archive: the template and the client, both shown in cpp/README.md.
cp "$here/buf.gen.yaml" "$here/stream.cc" "$work/"
cd "$work"
start=$SECONDS

# README install: begin
tar -xzf "$DIST/pi-proto-schema-0.2.0.tar.gz"
buf generate pi-proto-schema-0.2.0 --template buf.gen.yaml
g++ -std=c++17 -Igen -o stream stream.cc gen/pi/ai/v1/*.pb.cc gen/buf/validate/validate.pb.cc $(pkg-config --cflags --libs grpc++ protobuf)
# README install: end

built=$SECONDS
echo "cpp consumer: generated and compiled in $((built - start)) s"

# The server prints `listening on HOST:PORT` as its first stdout line.
"$PI_PROTO" serve --port 0 >server.out 2>server.err &
server=$!
address=""
for _ in $(seq 600); do
  line="$(head -n 1 server.out)"
  if [ -n "$line" ]; then address="${line#listening on }"; break; fi
  kill -0 "$server" 2>/dev/null || { cat server.err >&2; fail "pi-proto serve exited"; }
  sleep 0.1
done
[ -n "$address" ] || fail "pi-proto serve printed nothing in 30 s"
[ "$address" != "$line" ] || fail "pi-proto serve printed '$line', not 'listening on HOST:PORT'"

status=0; ./stream "$address" >stream.out 2>stream.err || status=$?
[ "$status" = 0 ] || { cat stream.out stream.err >&2; fail "stream exited $status"; }
expected="start
text_start
text_delta
text_delta
text_end
toolcall_start
toolcall_delta
toolcall_delta
toolcall_delta
toolcall_end
done
我先读取项目说明。
TOOL_USE"
if [ "$(cat stream.out)" != "$expected" ]; then
  diff <(echo "$expected") stream.out >&2 || true
  fail "stream printed something else than the README trip (diff above: expected, then got)"
fi
cat stream.out

# A failure must show in the exit code: the same address once the server is gone.
kill "$server"; wait "$server" 2>/dev/null || true; server=""
if ./stream "$address" >stream.out 2>stream.err; then
  fail "stream exited 0 against a stopped server"
fi
grep -q "^error: status 14" stream.err || { cat stream.err >&2; fail "stream did not report UNAVAILABLE"; }

echo "cpp consumer: ok ($((SECONDS - start)) s)"
