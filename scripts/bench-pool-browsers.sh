#!/bin/bash
# Gate the same tasks with the HTTP browser and with Chromium, side by side.
# Usage: BIN=path/to/wildawm DIR=run-dir scripts/bench-pool-browsers.sh (docs/BENCHMARKS.md, issue 15).
set -u
BIN=${BIN:-wildawm}
DIR=${DIR:-/tmp/w640}   # a world run gated by wildawm pool run
rm -rf /tmp/cmp; mkdir -p /tmp/cmp/http /tmp/cmp/chromium
for d in $(ls -d $DIR/tasks/*/ | awk 'NR%37==1' | head -10); do
  n=$(basename $d)
  for m in http chromium; do cp -r $d /tmp/cmp/$m/$n; rm -rf /tmp/cmp/$m/$n/gate; done
done
for d in /tmp/cmp/http/*/; do
  n=$(basename $d)
  s=$(date +%s.%N); $BIN gate --dir $DIR --task /tmp/cmp/http/$n --fake-browser >/dev/null 2>>/tmp/cmp/http.log; e=$(date +%s.%N)
  s2=$(date +%s.%N); $BIN gate --dir $DIR --task /tmp/cmp/chromium/$n >/dev/null 2>>/tmp/cmp/chromium.log; e2=$(date +%s.%N)
  echo "$n $(echo "$e - $s" | bc) $(echo "$e2 - $s2" | bc)"
done
