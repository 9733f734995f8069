#!/bin/bash
# Submits a sharded hermes-batch run to Slurm: an array of N shards, then a merge job that starts when
# every array task has ended (whatever its exit code).
#
#   SHARDS=16 scripts/slurm/submit.sh data.jsonl exp1 --model my-model --base-url http://inference:8000/v1
set -euo pipefail
DATASET=${1:?usage: SHARDS=N submit.sh DATASET.jsonl RUN_NAME [hermes-batch run options]}
RUN_NAME=${2:?usage: SHARDS=N submit.sh DATASET.jsonl RUN_NAME [hermes-batch run options]}
SHARDS=${SHARDS:-16}
OUTPUT_DIR=${OUTPUT_DIR:-runs}
here=$(cd "$(dirname "$0")" && pwd)

# Flags on the command line override the #SBATCH lines; the count travels in the environment.
array_job=$(sbatch --parsable --array="0-$((SHARDS - 1))" \
  --export="ALL,HERMES_BATCH_SHARD_COUNT=${SHARDS},OUTPUT_DIR=${OUTPUT_DIR}" \
  "$here/hermes-batch.sbatch" "$@")
merge_job=$(sbatch --parsable --dependency="afterany:${array_job%%;*}" --job-name=hb-merge \
  --output="hermes-batch-merge-%j.out" --wrap "npx hermes-batch merge '${OUTPUT_DIR}/${RUN_NAME}'")
echo "shards: job array ${array_job} (${SHARDS} tasks); merge: job ${merge_job}"
echo "results: ${OUTPUT_DIR}/${RUN_NAME}/ once job ${merge_job} has ended (see hermes-batch-merge-${merge_job}.out)"
