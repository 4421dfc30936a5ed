#!/usr/bin/env bash
# The crate as a new user meets it (`make -C rust consumer DIST=dir PI_PROTO=command`): in a fresh
# folder outside the repository, a fresh Cargo project depends on the crate that `make -C rust
# dist` wrote into DIST (unpacked, as a path dependency), builds the README example (the code
# between the `README example` markers of tests/client.rs) as its main program, and runs it
# against `$PI_PROTO serve --port 0`. It fails loudly unless the example prints the README trip,
# and removes its folder at the end.
#
# Crates come from the registry cache that `make -C rust test` fills: offline when everything is
# there, from crates.io otherwise; the versions are those of the crate's own Cargo.lock. Builds go
# to CARGO_TARGET_DIR (the Makefile's is rust/target, where `make dist` built the crate's
# dependencies), so little compiles again. PROTOC must name a protoc (prost-protovalidate-types
# runs one at build time); the Makefile points it at tools/protoc unless the environment sets one.
set -euo pipefail

: "${DIST:?DIST must name the folder holding pi-proto-VERSION.crate}"
: "${PI_PROTO:?PI_PROTO must name the pi-proto command (its serve is the server)}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(cat "$here/../VERSION")
crate="$DIST/pi-proto-$version.crate"

fail() { echo "consumer: $*" >&2; exit 1; }
[[ -f $crate ]] || fail "no $crate (run make -C rust dist DIST=$DIST first)"
[[ -x $PI_PROTO ]] || command -v "$PI_PROTO" >/dev/null || fail "$PI_PROTO is no command"
grep -q "pi-proto-$version.crate" "${BASH_SOURCE[0]}" || fail "the install lines do not name version $version"

work=$(mktemp -d)
server=
cleanup() {
	if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

install() {
	rm -rf "$work/consumer" "$work/pi-proto-$version"
	mkdir "$work/consumer"
	cd "$work/consumer"
	cargo init --quiet --name consumer
# README install: begin
tar -xzf "$DIST/pi-proto-0.2.0.crate" -C ..    # unpacks ../pi-proto-0.2.0
cargo add pi-proto --path ../pi-proto-0.2.0
cargo add tokio@1.48.0 --features rt-multi-thread,macros
# README install: end
}
# Offline first: everything the example needs is in the cache after `make -C rust test`.
(export CARGO_NET_OFFLINE=true; install) >"$work/install.log" 2>&1 || {
	echo "consumer: not everything is in the registry cache; installing from crates.io" >&2
	install
}
cd "$work/consumer"
# The versions pi-proto was built and tested with: its Cargo.lock, shipped in the crate.
cp "../pi-proto-$version/Cargo.lock" Cargo.lock
cargo fetch --offline --quiet 2>/dev/null || cargo fetch --quiet

# main.rs: the README example, as tests/client.rs runs it, against the server named on the
# command line; then the final text and the stop reason, for the checks below.
example=$(sed -n '/\/\/ README example: begin$/,/\/\/ README example: end$/p' "$here/tests/client.rs" |
	sed -e '1d' -e '$d' -e 's/^    //')
[[ -n $example ]] || fail "tests/client.rs marks no README example"
cat >src/main.rs <<EOF
use pi_proto::v1::AgentContext;
use pi_proto::{CallOptions, ModelClient, event_kind, text_of, user_message};

#[tokio::main]
async fn main() {
    let target = std::env::args().nth(1).expect("usage: consumer HOST:PORT");
    let target = target.as_str();
$example
    println!("text: {}", text_of(&message));
    println!("stop reason: {}", message.stop_reason().as_str_name());
}
EOF
cargo build --offline --quiet || fail "the example does not build"

"$PI_PROTO" serve --port 0 >"$work/server.out" 2>"$work/server.err" &
server=$!
for _ in $(seq 600); do
	grep -q '^listening on ' "$work/server.out" 2>/dev/null && break
	kill -0 "$server" 2>/dev/null || fail "the server exited: $(cat "$work/server.err")"
	sleep 0.1
done
target=$(sed -n '1s/^listening on //p' "$work/server.out")
[[ -n $target ]] || fail "the server printed no 'listening on HOST:PORT' line"

output=$(timeout 60 cargo run --offline --quiet -- "$target") || fail "the example failed: $output"
printf '%s\n' "$output"
kinds=$(printf '%s\n' "$output" | sed -n 1p)
[[ $kinds == "start "*" done 我先读取项目说明。" ]] || fail "unexpected events and text: $kinds"
printf '%s\n' "$output" | grep -qx 'text: 我先读取项目说明。' || fail "the final text is not the README trip's"
printf '%s\n' "$output" | grep -qx 'stop reason: STOP_REASON_TOOL_USE' || fail "the stop reason is not TOOL_USE"
echo "consumer: pi-proto-$version.crate ran the README example against $PI_PROTO serve"
