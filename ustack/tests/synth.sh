# shellcheck shell=bash
# Traces made up for a program built on this machine: tracefs's text form,
# with the frames that a stack through given functions would have.
# Sourced by host-tests and bench.

# The file offset of address ADDR of an ELF file, by its LOAD segments
file_offset() { # file addr
	readelf -lW "$1" | awk -v a=$(($2)) '$1 == "LOAD" && a >= strtonum($3) && a < strtonum($3) + strtonum($5) {
		printf "%x\n", a - strtonum($3) + strtonum($2); exit }'
}
sym_addr() { nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1 }'; }

# Sets frames=(): the file offsets of FUNC+4 for each FUNC, innermost first
frames_of_prog() { # file func...
	local file=$1 fn a
	shift
	frames=()
	for fn in "$@"; do
		a=$(sym_addr "$file" "$fn")
		[ -n "$a" ] || { echo "no symbol $fn in $file" >&2; return 1; }
		frames+=("$(file_offset "$file" $((a + 4)))")
	done
}

# The build-id of an ELF file, in hex, as the kernel prints it; empty if none
build_id_of() { # file
	LC_ALL=C readelf -nW "$1" 2> /dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1
}

# N events of task PID, each with cookie COOKIE, the file named once, then
# the stack of ${frames[@]} in the file.  With synth_build_id set (hex, or
# none), inode_cache carries build_id= as kernels that give it print it.
synth() { # path-as-printed inode dev cookie pid [n]
	local path=$1 ino=$2 dev=$3 cookie=$4 pid=$5 n=${6:-1} i f id=
	[ -n "${synth_build_id:-}" ] && id="build_id=$synth_build_id "
	for ((i = 0; i < n; i++)); do
		printf '            prog-%d     [000] .....   10.%06d: sys_getppid()\n' "$pid" "$i"
		printf '            prog-%d     [000] .....   10.%06d: user_unwind_cookie: cookie=%x\n' "$pid" "$i" "$cookie"
	done
	printf '            prog-%d     [000] ...1.   11.000000: inode_cache: inode=%s dev=[%s] %spath=%s\n' \
		"$pid" "$ino" "$dev" "$id" "$path"
	printf '            prog-%d     [000] ...1.   11.000001: <user stack unwind>\ncookie=%x\n' "$pid" "$cookie"
	for f in "${frames[@]}"; do
		printf ' =>  <%016x> : %s : %s\n' $((16#$f)) "$ino" "$dev"
	done
}

# N copies of the one-stack trace TEMPLATE (task 42, cookie 100000001),
# each of its own task and cookie
big() { # template n
	awk -v n="$2" -v tmpl="$1" 'BEGIN {
		while ((getline l < tmpl) > 0) t[k++] = l
		for (i = 0; i < n; i++)
			for (j = 0; j < k; j++) {
				l = t[j]; gsub(/prog-42 /, "prog-" (1000 + i % 30000) " ", l)
				gsub(/cookie=100000001/, sprintf("cookie=%x", 4096 + i), l)
				print l
			}
	}'
}
