#!/bin/bash
# Submits a sharded hermes-batch run to Slurm: a job array of N shards, then a merge job that starts when
# every array task has ended (whatever its exit code: the merge is what names unfinished shards).
#
#   SHARDS=4 scripts/slurm/submit.sh [sbatch options…] -- DATASET.jsonl RUN_NAME [hermes-batch run options]
#
#   SHARDS      shard count N (default 4)
#   ARRAY       the array indexes to submit (default 0-(N-1)); a rerun of some shards: ARRAY=1,3
#   OUTPUT_DIR  where runs go (default ./runs), made absolute; must be on storage every node can see
#   sbatch options (before --) go to the array and to the merge job: --partition, --account, --qos,
#   --cpus-per-task (= hermes-batch --workers), --mem, --time, … Defaults, which fit a 2-CPU node:
#   --cpus-per-task=1 --mem=1G --time=12:00:00.
#
# Keys only from the environment (OPENAI_API_KEY, OPENROUTER_API_KEY, …; sbatch --export=ALL carries
# them): a key on the command line would show in `scontrol show job` and `ps`, so --api-key is refused.
# Logs: OUTPUT_DIR/RUN_NAME/shards/<i>-of-<N>/slurm-<jobid>_<i>.log and one .attempt<k>.log per attempt;
# the merge job's in OUTPUT_DIR/RUN_NAME/merge-<jobid>.log. Prints the two job ids (array, merge).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)

sbatch_opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sbatch_opts+=("$1"); shift; done
if [ $# -eq 0 ]; then
  echo "usage: SHARDS=N submit.sh [sbatch options…] -- DATASET.jsonl RUN_NAME [hermes-batch run options]" >&2
  exit 2
fi
shift # the --
DATASET=${1:?usage: SHARDS=N submit.sh [sbatch options…] -- DATASET.jsonl RUN_NAME [run options]}
RUN_NAME=${2:?usage: SHARDS=N submit.sh [sbatch options…] -- DATASET.jsonl RUN_NAME [run options]}
for a in "$@"; do
  case "$a" in
    --api-key|--api-key=*|--approval-api-key|--approval-api-key=*|--judge-api-key|--judge-api-key=*)
      echo "submit.sh: ${a%%=*} would put the key in the job's command line (scontrol show job, ps): export OPENAI_API_KEY (or OPENROUTER_API_KEY, …) instead" >&2
      exit 2 ;;
  esac
done
SHARDS=${SHARDS:-4}
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: SHARDS must be a whole number ≥ 1, got '$SHARDS'" >&2; exit 2; }
ARRAY=${ARRAY:-0-$((SHARDS - 1))}
# Slurm's index syntax: 0-15, 1,3, 0-15:2 (a step), with an optional %N throttle.
range='[0-9]+(-[0-9]+(:[1-9][0-9]*)?)?'
[[ "$ARRAY" =~ ^$range(,$range)*(%[1-9][0-9]*)?$ ]] || {
  echo "submit.sh: ARRAY must be array indexes such as 0-15, 1,3 or 0-15:2 (optionally %N), got '$ARRAY'" >&2
  exit 2
}
OUTPUT_DIR=${OUTPUT_DIR:-runs}
mkdir -p "$OUTPUT_DIR"
OUTPUT_DIR=$(cd "$OUTPUT_DIR" && pwd)
[ -f "$checkout/dist/src/cli.js" ] || { echo "submit.sh: $checkout/dist/src/cli.js not found: run npm ci && npm run build in $checkout" >&2; exit 2; }
[ -f "$DATASET" ] || { echo "submit.sh: dataset $DATASET not found" >&2; exit 2; }
node_bin=$(command -v node) || { echo "submit.sh: node not found on PATH" >&2; exit 2; }

# Defaults unless the caller gave the option (either --opt=value or --opt value, or its short form).
has() { local o; for o in "${sbatch_opts[@]}"; do case "$o" in "$1"|"$1"=*|${2:-"$1"}|${2:-"$1"}?*) return 0 ;; esac; done; return 1; }
defaults=()
has --cpus-per-task -c || defaults+=(--cpus-per-task=1)
has --mem || defaults+=(--mem=1G)
has --time -t || defaults+=(--time=12:00:00)
all_opts=("${defaults[@]}" "${sbatch_opts[@]}")

# Shard folders exist before the jobs start: Slurm opens the --output file before the script runs.
w=${#SHARDS}; (( w < 4 )) && w=4
run_dir="$OUTPUT_DIR/$RUN_NAME"
printf -v count_pad "%0${w}d" "$SHARDS"
expand_array() { # 0-3,7 → 0 1 2 3 7; 0-6:2 → 0 2 4 6 (the %… throttle suffix ignored)
  local part step; IFS=, read -ra parts <<<"${1%%\%*}"
  for part in "${parts[@]}"; do
    step=1
    if [[ "$part" == *:* ]]; then step=${part#*:}; part=${part%:*}; fi
    if [[ "$part" == *-* ]]; then seq "${part%-*}" "$step" "${part#*-}"; else echo "$part"; fi
  done
}
for i in $(expand_array "$ARRAY"); do
  (( i < SHARDS )) || { echo "submit.sh: array index $i is not below SHARDS=$SHARDS" >&2; exit 2; }
  printf -v d "%s/shards/%0${w}d-of-%s" "$run_dir" "$i" "$count_pad"
  mkdir -p "$d"
done

# What a rerun needs, recorded by each shard in its launch.json (`hermes-batch shards` prints it back).
export HERMES_BATCH_SHARD_COUNT=$SHARDS OUTPUT_DIR HERMES_BATCH_CHECKOUT=$checkout HERMES_BATCH_NODE=$node_bin
export HERMES_BATCH_SUBMIT="$here/submit.sh"
HERMES_BATCH_SBATCH_OPTIONS=""
[ ${#sbatch_opts[@]} -eq 0 ] || HERMES_BATCH_SBATCH_OPTIONS=$(printf '%q ' "${sbatch_opts[@]}")
export HERMES_BATCH_SBATCH_OPTIONS=${HERMES_BATCH_SBATCH_OPTIONS% }
HERMES_BATCH_SCRIPT_ARGS=$(printf '%q ' "$@"); export HERMES_BATCH_SCRIPT_ARGS=${HERMES_BATCH_SCRIPT_ARGS% }

array_job=$(sbatch --parsable --array="$ARRAY" --export=ALL "${all_opts[@]}" \
  --output="$run_dir/shards/%${w}a-of-$count_pad/slurm-%A_%a.log" \
  "$here/hermes-batch.sbatch" "$@")
array_job=${array_job%%;*}
merge_cmd="exec $(printf '%q' "$node_bin") $(printf '%q' "$checkout/dist/src/cli.js") merge $(printf '%q' "$run_dir")"
merge_job=$(sbatch --parsable --dependency="afterany:${array_job}" --kill-on-invalid-dep=no --job-name=hb-merge --export=ALL \
  "${all_opts[@]}" --output="$run_dir/merge-%j.log" --wrap "$merge_cmd")
merge_job=${merge_job%%;*}
echo "shards: job array ${array_job} (indexes ${ARRAY} of ${SHARDS}); merge: job ${merge_job}"
echo "status: node $checkout/dist/src/cli.js shards $run_dir    merge log: $run_dir/merge-${merge_job}.log"
echo "$array_job $merge_job"
