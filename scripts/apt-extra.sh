# shellcheck shell=bash
# apt-get for suites the machine does not list (trixie-backports, sid),
# with a private state directory so the system's package lists stay
# untouched.  The archive's address comes from the machine's own sources.

APT_DIR=$CACHE/apt

apt_archive_uri() {
	# The main archive: the entry whose suite carries no -security or
	# -updates suffix, as apt itself reports it.
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' |
		awk '$2 !~ /-(security|updates|backports|proposed-updates)$/ { print $1; exit }'
}

apt_extra_opts() {
	printf '%s\n' \
		-o "Dir::State::Lists=$APT_DIR/lists" \
		-o "Dir::Etc::SourceList=$APT_DIR/sources.list" \
		-o "Dir::Etc::SourceParts=/dev/null" \
		-o "Dir::Cache=$APT_DIR/cache" \
		-o "APT::Sandbox::User=root"
}

# Refresh the private lists when they are missing or older than a day.
apt_extra_update() {
	local uri
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	uri=$(apt_archive_uri)
	[ -n "$uri" ] || die "cannot find the Debian archive in this machine's apt sources"
	cat > "$APT_DIR/sources.list.new" <<-SRC
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $KSRC_SUITE main
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $VNG_SUITE main
	SRC
	if ! cmp -s "$APT_DIR/sources.list.new" "$APT_DIR/sources.list" ||
	   [ -z "$(find "$APT_DIR/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
		mv "$APT_DIR/sources.list.new" "$APT_DIR/sources.list"
		log "updating private apt lists ($KSRC_SUITE, $VNG_SUITE)"
		# shellcheck disable=SC2046
		apt-get -q $(apt_extra_opts) update >/dev/null ||
			die "apt-get update for $KSRC_SUITE/$VNG_SUITE failed"
	else
		rm -f "$APT_DIR/sources.list.new"
	fi
}

apt_extra() {
	# shellcheck disable=SC2046
	apt-get $(apt_extra_opts) "$@"
}

apt_extra_cache() {
	# shellcheck disable=SC2046
	apt-cache $(apt_extra_opts) "$@"
}

# Download PKG=VERSION into DIR, checking the SHA256 that the signed index
# gives; a cut-off or corrupt file is removed and fetched again.
apt_extra_fetch() {
	local pkg=$1 ver=$2 dir=$3 sum file try
	sum=$(apt_extra_cache show "$pkg=$ver" | awk '/^SHA256:/ { print $2; exit }')
	[ -n "$sum" ] || die "no SHA256 for $pkg=$ver in the archive index"
	mkdir -p "$dir"
	for try in 1 2 3; do
		file=$(find "$dir" -maxdepth 1 -name "${pkg}_*.deb" | head -1)
		if [ -n "$file" ]; then
			if echo "$sum  $file" | sha256sum -c --status; then
				printf '%s\n' "$file"
				return 0
			fi
			warn "$file: checksum mismatch (cut off or corrupt); fetching again"
			rm -f "$file"
		fi
		log "downloading $pkg $ver (try $try)"
		(cd "$dir" && apt_extra download -q "$pkg=$ver" >/dev/null) ||
			warn "download of $pkg $ver failed"
	done
	die "could not get an intact $pkg $ver after 3 tries"
}
