# shellcheck shell=bash
# The trace of views/basic.trace.in made real for this machine:
# tests/prog.c and tests/lib.c built here, their paths, inodes, device,
# build-id and the file offsets of func+4 filled in, so that the frames
# resolve.  Sourced by views-tests and browser-test.
views_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$views_here/synth.sh"

# The build-id of an ELF file, in hex
views_build_id() { readelf -nW "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'; }

make_views_trace() { # work-dir output
	local work=$1 out=$2 f dev args
	local cflags="-std=gnu11 -O0 -g -fno-omit-frame-pointer"
	cc $cflags -o "$work/prog" "$views_here/prog.c" -ldl &&
		cc $cflags -shared -fPIC -o "$work/lib.so" "$views_here/lib.c" || return 1
	dev=$(stat -c %Hd:%Ld "$work/prog")
	args=(-e "s|@PROG@|$work/prog|g" -e "s|@LIB@|$work/lib.so|g"
	      -e "s|@PINO@|$(stat -c %i "$work/prog")|g" -e "s|@LINO@|$(stat -c %i "$work/lib.so")|g"
	      -e "s|@DEV@|$dev|g" -e "s|@LBID@|$(views_build_id "$work/lib.so")|g")
	for f in main level1 level2 level3 leaf; do
		frames_of_prog "$work/prog" "$f" || return 1
		args+=(-e "s|@$f@|$(printf %016x $((16#${frames[0]})))|g")
	done
	for f in lib_entry lib_leaf; do
		frames_of_prog "$work/lib.so" "$f" || return 1
		args+=(-e "s|@$f@|$(printf %016x $((16#${frames[0]})))|g")
	done
	sed "${args[@]}" "$views_here/views/basic.trace.in" > "$out" &&
		! grep -v '^#' "$out" | grep -q '@'
}
