#!/usr/bin/env bash
# The seed check (issue 30): gate TASKS self-checked tasks of different
# families once per --ensemble-seed 1..SEEDS and count the tasks whose
# verdict, level, failed gates and rollout outcomes are identical under
# every seed.
#
#   scripts/seed-check.sh BIN RUNDIR [TASKS] [SEEDS] [-- GATE-FLAGS...]
#
# BIN is a wildawm binary; RUNDIR a world-synthesis run whose tasks
# (RUNDIR/tasks, written by `wildawm syn tasks --check` or `pool run`) are
# copied and gated (`wildawm gate`, with GATE-FLAGS, e.g.
# --fake-browser --store DIR); TASKS (default 20) are taken round-robin
# over the families; SEEDS defaults to 5. Work goes to RUNDIR/seed-check.
set -euo pipefail
bin=$1 run=$(cd "$2" && pwd) n=${3:-20} seeds=${4:-5}
shift $(( $# < 4 ? $# : 4 )); [ "${1:-}" = "--" ] && shift
work=$run/seed-check
rm -rf "$work" && mkdir -p "$work"

# family<TAB>dir of every self-checked task, then round-robin.
for d in "$run"/tasks/*/; do
  [ -f "$d/check.json" ] && [ "$(jq -r .ok "$d/check.json")" = true ] || continue
  printf '%s\t%s\n' "$(jq -r .sketch.family "$d/sketch.json")" "${d%/}"
done | sort | awk -F'\t' '{ print (rank[$1]++) "\t" $1 "\t" $2 }' | sort -n -s -k1,1 | head -n "$n" | cut -f2,3 > "$work/picked.tsv"
echo "seed-check: $(wc -l < "$work/picked.tsv") tasks of $(cut -f1 "$work/picked.tsv" | sort -u | wc -l) families, seeds 1..$seeds"

while IFS=$'\t' read -r fam dir; do
  id=$(basename "$dir")
  for s in $(seq 1 "$seeds"); do
    dst=$work/s$s/$id
    mkdir -p "$work/s$s"
    cp -r "$dir" "$dst" && rm -rf "$dst/gate"
    "$bin" gate --dir "$run" --task "$dst" --ensemble-seed "$s" "$@" >/dev/null 2>"$dst.log" || true
    jq -c '{accepted, difficulty, failed: [.report.gates[] | select(.passed | not) | .name], rollouts: [.rollouts[] | {id, v}]}' "$dst/gate/outcome.json" > "$dst.sig" 2>/dev/null || { echo "seed-check: $id seed $s left no outcome: $dst.log" >&2; echo "no outcome $s" > "$dst.sig"; }
  done
  if [ "$(cat "$work"/s*/"$id".sig | sort -u | wc -l)" = 1 ]; then same=yes; else same=no; fi
  printf '%s\t%s\t%s\t%s\n' "$fam" "$id" "$same" "$(jq -r '"\(.accepted) \(.difficulty // "-")"' "$work/s1/$id.sig" 2>/dev/null)" | tee -a "$work/result.tsv"
done < "$work/picked.tsv"
total=$(wc -l < "$work/result.tsv"); same=$(awk -F'\t' '$3 == "yes"' "$work/result.tsv" | wc -l)
echo "seed-check: $same of $total tasks identical under seeds 1..$seeds (verdict, level, failed gates, every rollout's V)"
