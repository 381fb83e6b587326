# shellcheck shell=bash
# puppeteer-core from npm, in a cache outside the repository
# (${USTACK_CACHE:-$HOME/.cache/ustack}/npm, the cache of scripts/lib.sh),
# installed once.  Sourced by browser-test and bench.
puppeteer_cache=${USTACK_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/ustack}/npm
PUPPETEER_VERSION=${PUPPETEER_VERSION:-24}

# 0 when puppeteer-core is there; else 1, with npm's last words in $1
puppeteer_install() { # log
	[ -f "$puppeteer_cache/node_modules/puppeteer-core/package.json" ] && return 0
	mkdir -p "$puppeteer_cache"
	timeout 300 npm install --prefix "$puppeteer_cache" --no-audit --no-fund --loglevel=error \
		"puppeteer-core@$PUPPETEER_VERSION" > "$1" 2>&1
}
