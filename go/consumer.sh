#!/usr/bin/env bash
# The Go module as a new user meets it (`make -C go consumer DIST=dir PI_PROTO=command`): in a
# fresh folder outside the repository, a fresh module installs the archive that `make -C go dist`
# wrote into DIST, builds the README example (the code between the `README example` markers of
# piproto/client_test.go) as its main program, and runs it against `$PI_PROTO serve --port 0`.
# It fails loudly unless the example prints the README trip, and removes its folder at the end.
# Modules come from the module cache that `make -C go test` fills (GOPROXY as the go command has
# it, for what the cache lacks).
set -euo pipefail

work=
fail() {
	echo "consumer: $*" >&2
	if [[ -s $work/server.err ]]; then sed 's/^/  server: /' "$work/server.err" >&2; fi
	exit 1
}
: "${DIST:?DIST must name the folder holding pi-proto-go-VERSION.tar.gz}"
: "${PI_PROTO:?PI_PROTO must name the pi-proto command (its serve is the server)}"
# The install lines say `go`, as a user types them: GO (from the Makefile) comes first on PATH.
gobin=$(command -v "${GO:-go}") || fail "no go command (${GO:-go})"
PATH="$(dirname "$gobin"):$PATH"
command -v "$PI_PROTO" >/dev/null || fail "$PI_PROTO is no command"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(cat "$here/../VERSION")
[[ -f $DIST/pi-proto-go-$version.tar.gz ]] ||
	fail "no $DIST/pi-proto-go-$version.tar.gz (run make -C go dist DIST=$DIST first)"
grep -q "^tar -xzf \"\$DIST/pi-proto-go-$version.tar.gz\"$" "${BASH_SOURCE[0]}" ||
	fail "the install lines below do not name version $version"

# The README example, as written in the test, in a main program whose `t.Fatal` ends it.
example=$(awk '/^[ \t]*\/\/ README example: end$/ { inside = 0 } inside { print } /^[ \t]*\/\/ README example: begin$/ { inside = 1 }' \
	"$here/piproto/client_test.go")
[[ -n $example ]] || fail "piproto/client_test.go marks no README example"

work=$(mktemp -d)
server=
cleanup() {
	if [[ -n $server ]]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/consumer"
cd "$work/consumer"
export GOFLAGS=-mod=mod
go mod init example.com/consumer 2>/dev/null
cat >main.go <<EOF
// The README example of pi-proto for Go, run against the server listening at os.Args[1].
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
)

type fatal struct{}

func (fatal) Fatal(args ...any) { log.Fatal(args...) }

func main() {
	target, ctx, t := os.Args[1], context.Background(), fatal{}
$example
	if failure := events.Failure(); failure != nil {
		log.Fatal(failure)
	}
	fmt.Println(strings.Join(kinds, " "))
	fmt.Println(piproto.TextOf(message))
	fmt.Println(strings.TrimPrefix(message.GetStopReason().String(), "STOP_REASON_"))
}
EOF

# README install: begin
tar -xzf "$DIST/pi-proto-go-0.2.0.tar.gz"
go mod edit -require=github.com/pi-proto/pi-proto/go@v0.2.0 \
  -replace=github.com/pi-proto/pi-proto/go=./pi-proto-go-0.2.0
go mod tidy
# README install: end

go build -o example .
from=$(go list -m -f '{{.Version}} {{.Replace.Path}}' github.com/pi-proto/pi-proto/go)
[[ $from == "v$version ./pi-proto-go-$version" ]] || fail "the module does not come from the archive: $from"

# The server prints `listening on HOST:PORT` as its first line.
mkfifo "$work/server.out"
"$PI_PROTO" serve --port 0 >"$work/server.out" 2>"$work/server.err" &
server=$!
exec 3<"$work/server.out"
read -r -t 60 line <&3 || fail "$PI_PROTO serve ended or printed no first line within 60 s"
[[ $line == "listening on "* ]] || fail "$PI_PROTO serve said: $line"

output=$(timeout 60 ./example "${line#listening on }") || fail "the example failed"
expected="start text_start text_delta text_delta text_end toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_end done
我先读取项目说明。
TOOL_USE"
[[ $output == "$expected" ]] || fail "the example printed:
$output
instead of:
$expected"
printf '%s\n' "$output"
echo "consumer: pi-proto-go-$version from $DIST ran the README example against $PI_PROTO serve"
