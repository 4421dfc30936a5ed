#!/usr/bin/env bash
# The npm package as a new user meets it: in a fresh folder outside the repository, a fresh
# project installs pi-proto from the tarball in DIST (never from these sources), type-checks the
# README example against the package's declarations with tsc, compiles it, and runs it with plain
# node (no tsx) against `$PI_PROTO serve --port 0`.
#
#   DIST=/abs/dir PI_PROTO=/abs/path/of/pi-proto bash scripts/consumer.sh
#
# Offline except for the npm registry: the npm cache that `npm ci` filled is preferred.
set -euo pipefail

: "${DIST:?set DIST to the absolute folder holding pi-proto-VERSION.tgz}"
: "${PI_PROTO:?set PI_PROTO to the absolute path of the pi-proto command}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" # typescript/
version="$(cat "$here/../VERSION")"
tarball="$DIST/pi-proto-$version.tgz"
fail() { echo "consumer: $*" >&2; exit 1; }
[ -f "$tarball" ] || fail "$tarball is missing: run make dist DIST=$DIST first"
[ -x "$PI_PROTO" ] || fail "PI_PROTO=$PI_PROTO is not an executable"
grep -Fq "npm install \"\$DIST/pi-proto-$version.tgz\"" "${BASH_SOURCE[0]}" \
  || fail "the README install lines must name pi-proto-$version.tgz"

# The toolchain the consumer type-checks with: the versions this package builds with.
ts_version="$(node -p 'require(process.argv[1]).devDependencies.typescript' "$here/package.json")"
types_node_version="$(node -p 'require(process.argv[1]).devDependencies["@types/node"]' "$here/package.json")"

# The README example: the lines between the markers in test/client.test.ts, less their indent.
snippet="$(awk '
  /\/\/ README example: end/ { on = 0 }
  on { print (index($0, indent) == 1 ? substr($0, length(indent) + 1) : $0) }
  /\/\/ README example: begin/ { on = 1; match($0, /^ */); indent = substr($0, 1, RLENGTH) }
' "$here/test/client.test.ts")"
[[ "$snippet" == *"streamModel("* ]] || fail "no README example between the markers in test/client.test.ts"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# What the tarball holds: the compiled ESM JavaScript with its declarations, README, LICENSE.
listing="$(tar -tzf "$tarball")"
for file in package/package.json package/README.md package/LICENSE package/dist/index.js package/dist/index.d.ts; do
  grep -Fxq "$file" <<<"$listing" || fail "$tarball lacks $file"
done
if grep -Eq '^package/(src|test|conformance|node_modules)/' <<<"$listing"; then fail "$tarball holds sources or tests"; fi

# The server, on a free port; its first stdout line is `listening on HOST:PORT`.
mkfifo "$work/server.out"
"$PI_PROTO" serve --port 0 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
exec 3<"$work/server.out"
read -r -t 60 first <&3 || fail "$PI_PROTO serve printed no first line: $(cat "$work/server.err")"
[[ "$first" =~ ^listening\ on\ ([^[:space:]]+:[0-9]+)$ ]] || fail "unexpected first line from serve: $first"
target="${BASH_REMATCH[1]}"
cat <&3 >/dev/null & # keep draining the server's stdout

mkdir "$work/app"
cd "$work/app"
cat >package.json <<'EOF'
{ "name": "pi-proto-consumer", "private": true, "type": "module" }
EOF
export npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false \
  npm_config_update_notifier=false npm_config_loglevel=warn
# README install: begin
npm install "$DIST/pi-proto-0.2.0.tgz"
# README install: end
npm install --save-dev --save-exact "typescript@$ts_version" "@types/node@$types_node_version"

cat >tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "target": "ES2022",
    "lib": ["ES2022"],
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "types": ["node"],
    "strict": true,
    "skipLibCheck": false,
    "outDir": "out"
  },
  "files": ["main.ts"]
}
EOF
{
  echo 'import { StopReason, eventKind, streamModel, textOf } from "pi-proto";'
  echo
  echo 'const target = process.argv[2]!;'
  echo "$snippet"
  echo 'console.log(`kinds: ${kinds.join(" ")}`);'
  echo 'console.log(`text: ${textOf(message)}`);'
  echo 'console.log(`stop reason: ${StopReason[message.stopReason]}`);'
  echo 'console.log(`failure: ${JSON.stringify(events.failure ?? null)}`);'
} >main.ts
# Compile as a Node user's project does (skipLibCheck, as `tsc --init` sets it).
npx --no-install tsc -p . --skipLibCheck true || fail "tsc rejected the README example"
# Then check every declaration file too: pi-proto's must be clean. The only error allowed is
# connect's own: its declarations name HeadersInit, a DOM type that @types/node 20 lacks.
if ! npx --no-install tsc -p . --noEmit >"$work/tsc.out"; then
  if grep -v "^node_modules/@connectrpc/connect/.*error TS2304: Cannot find name 'HeadersInit'.$" "$work/tsc.out"; then
    fail "tsc found errors in the declarations (above)"
  fi
fi

# Plain node: the package's exports resolve to its compiled JavaScript.
resolved="$(node --input-type=module -e 'console.log(import.meta.resolve("pi-proto"))')"
[[ "$resolved" == file://*/app/node_modules/pi-proto/dist/index.js ]] || fail "pi-proto resolves to $resolved"

output="$(timeout 60 node out/main.js "$target")" || fail "the README example failed: $output"
echo "$output"
grep -Fxq "text: 我先读取项目说明。" <<<"$output" || fail "wrong final text"
grep -Fxq "stop reason: TOOL_USE" <<<"$output" || fail "wrong stop reason"
grep -Fxq "failure: null" <<<"$output" || fail "the stream failed"
grep -Eq '^kinds: start .* done$' <<<"$output" || fail "wrong event kinds"
echo "consumer: pi-proto $version from $tarball: README example OK against $target"
