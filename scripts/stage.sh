# shellcheck shell=bash
# For the stages of make test (tests/stages/*): the common settings, and
# the lines a stage prints.  Source, don't run.
#   PASS name
#   FAIL name -- why
#   SKIP name -- why
# Any other line is progress.  scripts/test counts the result lines; a
# stage that prints none, or exits non-zero without a FAIL, is a FAIL.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# A stage reports what went wrong; it does not stop at the first error.
set +e +o pipefail

: "${RUN_DIR:?a stage runs under scripts/test, which sets RUN_DIR}"
stage_failed=0
pass() { printf 'PASS %s%s\n' "$1" "${2:+ -- $2}"; }
fail() { printf 'FAIL %s%s\n' "$1" "${2:+ -- $2}"; stage_failed=1; }
skip() { printf 'SKIP %s%s\n' "$1" "${2:+ -- $2}"; }
elapsed() { echo "$(($(date +%s) - $1))s"; }

# The patched kernel that stage 40-build made, or nothing.
patched_kernel() {
	local k
	k=$(cat "$RUN_DIR/patched-kernel" 2>/dev/null) && [ -f "$k" ] && echo "$k"
}

# Run a test script that prints PASS/FAIL/SKIP lines; show them with
# PREFIX.  No result at all, or a non-zero exit without a FAIL line, is
# a FAIL of its own.
run_tests() { # prefix output-file command...
	local prefix=$1 out=$2 rc
	shift 2
	"$@" > "$out" 2>&1
	rc=$?
	sed -n "s/^\(PASS\|FAIL\|SKIP\) /\1 $prefix: /p" "$out"
	if ! grep -qE '^(PASS|FAIL) ' "$out"; then
		fail "$prefix" "no result (exit $rc); see $out"
	elif [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		fail "$prefix" "exit $rc without a FAIL line; see $out"
	fi
}
