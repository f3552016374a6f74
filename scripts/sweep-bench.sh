#!/bin/bash
# usage: scripts/sweep-bench.sh BIN DIR KILLS: kill `BIN syn worlds` KILLS times once it has mounted an instance, then run it to the end; prints the mounts left under its run directory after each (docs/BENCHMARKS.md, start-up sweep)
bin=$1; dir=$(realpath -m "$2"); kills=$3; H=$(printf %s "$dir" | sha256sum | cut -c1-12)
rm -rf "$dir"
points() { grep " /tmp/wildawm-syn-$H" /proc/self/mountinfo | awk '{print $5}' | sort; }
count() { points | wc -l; }
echo "start: $(count) mounts"
for k in $(seq 1 $kills); do
  points > /tmp/sweep-before
  $bin syn worlds --personas 2 --days 8 --dir "$dir" >/dev/null 2>&1 &
  pid=$!
  # wait until this run mounted an instance of its own (a mount point not there before)
  for i in $(seq 1 3000); do
    [ -n "$(points | comm -13 /tmp/sweep-before -)" ] && break
    kill -0 $pid 2>/dev/null || { echo "kill $k: run ended before it mounted"; break; }
    sleep 0.05
  done
  sleep 0.$((RANDOM % 9 + 1))
  kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
  echo "kill $k: $(count) mounts left"
done
$bin syn worlds --personas 2 --days 8 --dir "$dir" > /tmp/sweep-final.out 2>/tmp/sweep-final.err
echo "final run rc=$?: $(count) mounts left"
grep -o "swept [0-9]* work director[^)]*)" /tmp/sweep-final.err | head -2
