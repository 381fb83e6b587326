# shellcheck shell=bash
# Common settings and helpers for the harness scripts.  Source, don't run.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The base kernel: Debian's linux-source-7.3, as the README says.
KSRC_PKG=linux-source-7.3
KSRC_VERSION=7.3.4-1~bpo13+1
KSRC_SERIES='7.3.*'
KSRC_SUITE=trixie-backports
# virtme-ng is only in sid; bookworm satisfies its dependencies.
VNG_SUITE=sid

CACHE=${USTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ustack}
JOBS=${JOBS:-$(($(nproc) + 1))}

log()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# The version actually in use, written by fetch-source.
ksrc_version() {
	local f="$CACHE/source-version"
	[ -s "$f" ] || die "no kernel source yet; run: make source"
	cat "$f"
}

# The git work tree of the kernel, with the series applied as commits.
# Debian versions hold '~' and '+', which do not belong in paths.
path_version() { ksrc_version | tr '~+:' '___'; }
ktree() { printf '%s/linux-%s\n' "$CACHE" "$(path_version)"; }
# Held, with its pid, by a run that has the work tree at another commit
tree_busy_file() { printf '%s/.git/ustack-busy\n' "$1"; }

# Config key: kernel version plus the content of the fragments used.
# $1: variant name (a file kconfig/<name>.config, plus kconfig/base.config)
config_fragments() {
	local variant=${1:-base}
	printf '%s\n' "$TOP/kconfig/base.config"
	[ "$variant" = base ] || printf '%s\n' "$TOP/kconfig/$variant.config"
}

config_key() {
	local variant=${1:-base}
	# shellcheck disable=SC2046
	printf '%s-%s-%s\n' "$(path_version)" "$variant" \
		"$(cat $(config_fragments "$variant") | sha256sum | cut -c1-12)"
}

build_dir() { printf '%s/build/%s\n' "$CACHE" "$(config_key "${1:-base}")"; }

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
export CCACHE_BASEDIR=$CACHE
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

# The series' own kselftests, relative to tools/testing/selftests/ftrace:
# the list in tests/series-kselftests, not what the tree happens to hold,
# so that a test that went missing is a FAIL, not an empty loop.
series_kselftests() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/tests/series-kselftests"
}

# RESULT of TEST in a results file of ftracetest-run, or nothing.
result_of() { # results-file test
	awk -F'\t' -v t="$2" '$2 == t { print $1 }' "$1" 2>/dev/null
}

# Write the series of the work tree as format-patch files plus a quilt
# "series" file into DIR.  Deterministic: no real hashes, no numbering, no
# version trailer, so that an unchanged commit exports byte for byte.
export_series() {
	local tree=$1 dir=$2
	mkdir -p "$dir"
	git -C "$tree" format-patch -q -N --zero-commit --no-signature \
		--abbrev=12 -o "$dir" pristine..series >/dev/null
	(cd "$dir" && ls -1 -- *.patch 2>/dev/null) > "$dir/series" || true
}

# Compare two exported series; print what differs.
diff_series() {
	local a=$1 b=$2 la lb
	la=$3 lb=$4
	diff -q "$a/series" "$b/series" >/dev/null 2>&1 ||
		printf '  %s: %s\n  %s: %s\n' "$la" "$(tr '\n' ' ' < "$a/series")" \
			"$lb" "$(tr '\n' ' ' < "$b/series")"
	local p
	while read -r p; do
		[ -f "$b/$p" ] || continue
		cmp -s "$a/$p" "$b/$p" || printf '  %s differs between %s and %s\n' "$p" "$la" "$lb"
	done < "$a/series"
}
