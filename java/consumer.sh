#!/usr/bin/env bash
# The Java artifact as a new user meets it: in a fresh folder outside the repository, install
# pi-proto-VERSION.jar (with its pom and sources jar) from DIST into a fresh local Maven
# repository, build a fresh project that depends on io.github.pi-proto:pi-proto:VERSION, and run
# the README example against `$PI_PROTO serve --port 0`.
#
#   java/consumer.sh DIST PI_PROTO      (what `make -C java consumer` runs)
#
# The fresh project's local repository is a folder of its own, so nothing but DIST can provide
# pi-proto, and ~/.m2 is left as it was. What Maven Central would serve (pi-proto's dependencies,
# the plugins) is read from the shared cache ~/.m2/repository, which `make test` and `make dist`
# fill, as a file:// repository; Maven Central is asked only for what that cache lacks.
set -euo pipefail

DIST=${1:?usage: consumer.sh DIST PI_PROTO}
PI_PROTO=${2:?usage: consumer.sh DIST PI_PROTO}
HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=$(cat "$HERE/../VERSION")
EXAMPLE="$HERE/src/test/java/io/github/piproto/ClientTest.java"
CACHE=${M2_CACHE:-$HOME/.m2/repository}
export DIST

fail() { echo "java consumer: FAILED: $*" >&2; exit 1; }
[[ $DIST == /* && $PI_PROTO == /* ]] || fail "DIST and PI_PROTO must be absolute paths"
for file in "pi-proto-$VERSION.jar" "pi-proto-$VERSION-sources.jar" "pi-proto-$VERSION.pom"; do
  [[ -f $DIST/$file ]] || fail "$DIST/$file is missing: run make -C java dist DIST=$DIST first"
done
[[ -x $PI_PROTO ]] || fail "$PI_PROTO is not an executable"

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "java consumer: FAILED at line $LINENO of $0" >&2' ERR
# .mvn/maven.config below splits its arguments at white space.
[[ $WORK != *[[:space:]]* ]] || fail "the temporary folder $WORK has a space in its path"

# Runs a step with its output in a log, shown only when the step fails.
step() {
  local log=$WORK/step.log
  if ! "$@" >"$log" 2>&1; then
    sed -e 's/\x1b\[[0-9;]*m//g' "$log" >&2
    fail "$*"
  fi
}

# The install plugin is the one plugin here that `make test` and `make dist` do not run: put it in
# the shared cache once (its help goal resolves it and its dependencies), so a warm run reads
# nothing from Maven Central.
cd "$WORK"
if [[ ! -f $CACHE/org/apache/maven/plugins/maven-install-plugin/3.1.4/maven-install-plugin-3.1.4.jar ]]; then
  step mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$CACHE" \
    org.apache.maven.plugins:maven-install-plugin:3.1.4:help
fi

# --- the fresh project ----------------------------------------------------------------------------
APP=$WORK/app
mkdir -p "$APP/src/main/java" "$APP/.mvn" "$WORK/m2"

# Every Maven run in $APP reads .mvn/maven.config: the fresh local repository and the settings
# that put the shared cache before Maven Central.
cat >"$APP/.mvn/maven.config" <<EOF
-B -q -Dstyle.color=never -Dmaven.repo.local=$WORK/m2 -s $WORK/settings.xml
EOF
cat >"$WORK/settings.xml" <<EOF
<settings>
  <profiles>
    <profile>
      <id>shared-cache</id>
      <repositories>
        <repository><id>shared-cache</id><url>file://$CACHE</url></repository>
      </repositories>
      <pluginRepositories>
        <pluginRepository><id>shared-cache</id><url>file://$CACHE</url></pluginRepository>
      </pluginRepositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>shared-cache</activeProfile></activeProfiles>
</settings>
EOF

cat >"$APP/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>pi-proto-consumer</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>io.github.pi-proto</groupId>
      <artifactId>pi-proto</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.14.0</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF

# Main.java: the README example, taken from between its markers in ClientTest.java as it is.
SNIPPET=$(awk '/\/\/ README example: begin/ { inside = 1 } inside { print } /\/\/ README example: end/ { inside = 0 }' "$EXAMPLE")
[[ -n $SNIPPET ]] || fail "no README example markers in $EXAMPLE"
cat >"$APP/src/main/java/Main.java" <<EOF
import io.github.piproto.*;
import io.github.piproto.ai.v1.*;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class Main {
  public static void main(String[] args) throws Exception {
    String target = args[0]; // host:port of \`pi-proto serve\`
$SNIPPET
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.println("kinds: " + String.join(" ", kinds));
    out.println("text: " + answer);
    out.println("stop reason: " + message.getStopReason());
  }
}
EOF

# --- install and build ----------------------------------------------------------------------------
# What a user types to put the artifact into the local repository (here the fresh one, through
# .mvn/maven.config); the project's pom then needs only the dependency.
cd "$APP"
# README install: begin
mvn org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file \
  -Dfile="$DIST/pi-proto-0.2.0.jar" -Dsources="$DIST/pi-proto-0.2.0-sources.jar" \
  -DpomFile="$DIST/pi-proto-0.2.0.pom"
# README install: end
INSTALLED=$WORK/m2/io/github/pi-proto/pi-proto/$VERSION
cmp -s "$INSTALLED/pi-proto-$VERSION.jar" "$DIST/pi-proto-$VERSION.jar" ||
  fail "the local repository does not hold $DIST/pi-proto-$VERSION.jar"
[[ -f $INSTALLED/pi-proto-$VERSION-sources.jar ]] || fail "the sources jar was not installed"

step mvn compile org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.outputFile="$APP/classpath.txt"
CLASSPATH_USED=$(cat "$APP/classpath.txt")
[[ :$CLASSPATH_USED: == *":$INSTALLED/pi-proto-$VERSION.jar:"* ]] ||
  fail "the class path does not take pi-proto from the local repository: $CLASSPATH_USED"
[[ $CLASSPATH_USED != *"$HERE"* ]] || fail "the class path reaches into the repository: $CLASSPATH_USED"

# --- run it against pi-proto serve ----------------------------------------------------------------
mkfifo "$WORK/server.out"
"$PI_PROTO" serve --port 0 >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
exec 3<"$WORK/server.out"
if ! IFS= read -r -t 30 FIRST <&3; then
  cat "$WORK/server.err" >&2
  fail "$PI_PROTO serve printed no first line within 30 s"
fi
[[ $FIRST =~ ^listening\ on\ ([^[:space:]]+:[0-9]+)$ ]] || fail "unexpected first line from serve: $FIRST"
TARGET=${BASH_REMATCH[1]}
cat <&3 >/dev/null &  # keep draining the server's stdout

OUTPUT=$(timeout 60 java -cp "$APP/target/classes:$CLASSPATH_USED" Main "$TARGET") ||
  fail "Main exited with status $?: $OUTPUT"
echo "$OUTPUT"
grep -qxF "text: 我先读取项目说明。" <<<"$OUTPUT" || fail "the final text is not 我先读取项目说明。"
grep -qxF "stop reason: STOP_REASON_TOOL_USE" <<<"$OUTPUT" || fail "the stop reason is not TOOL_USE"
grep -qx "kinds: start text_start .* done" <<<"$OUTPUT" || fail "the events are not start ... done"
CENTRAL=$({ grep -rlF '>central=' "$WORK/m2" --include=_remote.repositories || true; } | wc -l)
echo "java consumer: OK (pi-proto-$VERSION.jar from $DIST, run against $TARGET;" \
  "$CENTRAL artifacts read from Maven Central, the rest from $CACHE)"
