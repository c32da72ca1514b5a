#!/bin/sh
# Rebuild the JFR test recordings (see tests/data/README.md). Needs a JDK
# (17 was used: java, javac, jfr on the PATH); run from this folder.
set -eu
cd "$(dirname "$0")"
JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# profile.jfc with every event disabled but the two the parser reads.
awk '
	/<event name="/ { ev = $0; sub(/.*<event name="/, "", ev); sub(/".*/, "", ev) }
	/<\/event>/ { ev = "" }
	ev != "" && ev != "jdk.ExecutionSample" && ev != "jdk.ObjectAllocationSample" &&
	    /<setting name="enabled"/ { sub(/>true</, ">false<") }
	{ print }
' "$JAVA_HOME/lib/jfr/profile.jfc" > "$tmp/burn.jfc"

javac -d "$tmp" Burn.java
# One chunk: CPU and allocation samples for 3 s.
java -XX:StartFlightRecording=filename="$tmp/burn.jfr",settings="$tmp/burn.jfc" \
	-cp "$tmp" Burn 3000
cp "$tmp/burn.jfr" burn.jfr
# Two chunks of one run: a second recording, started after 1 s, makes
# the JVM start a new chunk.
java -XX:StartFlightRecording=filename="$tmp/multi.jfr",settings="$tmp/burn.jfc" \
	-XX:StartFlightRecording=delay=1s,filename="$tmp/other.jfr",settings="$tmp/burn.jfc" \
	-cp "$tmp" Burn 3000
cp "$tmp/multi.jfr" burn-chunks.jfr
jfr summary burn-chunks.jfr | grep Chunks

# Classes the JVM makes at run time in a package: CPU samples alone, gzipped
# (the JDK's metadata alone is 96 KB raw).
awk '
	/<event name="/ { ev = $0; sub(/.*<event name="/, "", ev); sub(/".*/, "", ev) }
	/<\/event>/ { ev = "" }
	ev != "" && ev != "jdk.ExecutionSample" && /<setting name="enabled"/ {
		sub(/>true</, ">false<")
	}
	{ print }
' "$JAVA_HOME/lib/jfr/profile.jfc" > "$tmp/cpu.jfc"
javac -d "$tmp" acme/Hidden.java acme/Spin.java
java -XX:StartFlightRecording=filename="$tmp/hidden.jfr",settings="$tmp/cpu.jfc" \
	-cp "$tmp" acme.Hidden 1500
gzip -9n < "$tmp/hidden.jfr" > hidden.jfr.gz

# A short run with the JDK's default settings, whose CPU sampler is on:
# no jdk.ExecutionSample, a few jdk.ObjectAllocationSample (JFR's own as
# it starts). And the same with the sampler off (default.jfc with
# jdk.ExecutionSample disabled): allocations alone.
javac -d "$tmp" Idle.java
java -XX:StartFlightRecording=filename="$tmp/idle.jfr" -cp "$tmp" Idle
gzip -9n < "$tmp/idle.jfr" > idle-cpu-on.jfr.gz
awk '
	/<event name="/ { ev = $0; sub(/.*<event name="/, "", ev); sub(/".*/, "", ev) }
	/<\/event>/ { ev = "" }
	ev == "jdk.ExecutionSample" && /<setting name="enabled"/ { sub(/>true</, ">false<") }
	{ print }
' "$JAVA_HOME/lib/jfr/default.jfc" > "$tmp/nocpu.jfc"
java -XX:StartFlightRecording=filename="$tmp/nocpu.jfr",settings="$tmp/nocpu.jfc" \
	-cp "$tmp" Idle
gzip -9n < "$tmp/nocpu.jfr" > idle-cpu-off.jfr.gz
for f in idle-cpu-on idle-cpu-off; do
	gzip -dc "$f.jfr.gz" > "$tmp/$f.jfr"
	jfr summary "$tmp/$f.jfr" | grep -E 'jdk\.(ExecutionSample|ObjectAllocationSample) '
done

# The expected figures, from the JDK's own reader.
for f in burn burn-chunks; do
	jfr print --json --events jdk.ExecutionSample,jdk.ObjectAllocationSample "$f.jfr" |
		python3 shares.py > "$f.shares.txt"
done
