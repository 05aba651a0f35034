#!/usr/bin/env bash
# The PGlite fault test (test/api/faults-postgres.test.ts › "on PGlite, whose thread listens for each
# client itself") run many times in a row under load: the evidence that it does not fail by chance.
#
#   bench/faults/pglite-fault-loop.sh [runs=100] [--no-load]
#
# One vitest invocation: the faults project's deployment starts once and the test runs `runs` times
# (PGLITE_FAULT_REPEATS), each run with a PGlite thread of its own, as in CI. Beside it a shell
# busy-loop keeps one core busy (unless --no-load); it is killed by its pid when the script ends.
# Prints how many runs passed and failed, and the first line of each failure: "timed out" is the
# hang; an answer to the held connection's query after the fault was set, the late cut. Exit status 0
# only when every run passed.
set -euo pipefail
runs=${1:-100}
load=yes
[[ ${2:-} == --no-load ]] && load=no
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
busy=
cleanup() {
  [[ -n $busy ]] && kill "$busy" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT
if [[ $load == yes ]]; then
  bash -c 'while :; do :; done' &
  busy=$!
fi
started=$(date +%s)
PGLITE_FAULT_REPEATS=$((runs - 1)) npx vitest run --config test/vitest.config.ts --project faults \
  -t 'on PGlite' api/faults-postgres --reporter=default --reporter=json --outputFile.json="$out/results.json" ||
  true
RUNS=$runs SECONDS_TAKEN=$(($(date +%s) - started)) LOAD=$load node -e '
const { testResults } = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
const test = testResults.flatMap((f) => f.assertionResults).find((t) => t.title.startsWith("on PGlite"));
if (!test) { console.log("the PGlite test did not run"); process.exit(1); }
// vitest keeps one error per failed repeat.
const failures = test.status === "passed" ? [] : test.failureMessages;
const runs = Number(process.env.RUNS);
console.log(`${runs - failures.length} of ${runs} runs passed, ${failures.length} failed` +
  ` (busy loop: ${process.env.LOAD}; ${process.env.SECONDS_TAKEN} s in all)`);
// A timeout reaches the JSON report as the error vitest made for its stack trace.
const label = (line) => (line === "Error: STACK_TRACE_ERROR" ? "timed out (the hang)" : line);
for (const message of failures) console.log(`  - ${label(message.split("\n")[0])}`);
process.exit(failures.length === 0 ? 0 : 1);
' "$out/results.json"
