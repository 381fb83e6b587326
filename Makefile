# Deferred user-space stack traces for ftrace: the harness.
#   make run    set everything up, boot the patched kernel, show the feature
#   make test   set everything up, run every test; last line "N passed, N failed"
#   make test-debug, make test-mutations, make stress, make bench: see README.md
# See README.md.

SHELL := /bin/bash
S := scripts

.PHONY: all deps source tree export status kernel ustack install uninstall run test test-debug test-mutations stress bench bench-kernel bench-ustack bench-offcpu bench-unwind help

all: help

help:
	@sed -n '2,5p' Makefile | sed 's/^# *//'

deps:
	@$(S)/deps

source: deps
	@$(S)/fetch-source

tree: source
	@$(S)/tree

export:
	@$(S)/export

status:
	@$(S)/series-status

kernel: tree
	@$(S)/build-kernel base >/dev/null

ustack: deps
	@$(MAKE) -s -C ustack

# ustack and its manual page, under PREFIX (/usr/local) inside DESTDIR.
# Only ustack's build libraries are needed (ustack/Makefile names the
# missing ones), not the harness's packages: no root, no apt.
install:
	@$(MAKE) -s -C ustack install

uninstall:
	@$(MAKE) -C ustack uninstall

run: kernel ustack
	@$(S)/demo

test: deps
	@$(S)/test

bench: bench-kernel bench-ustack bench-offcpu bench-unwind

# The kernel's cost of a stack, beside perf, in the VM (about 25 min)
bench-kernel: kernel
	@bench/kernel

bench-ustack: ustack
	@ustack/tests/bench

# Unwinding copies of the stack's top in user space: ustack beside perf's
# dwarf, on python3 in the VM (about 10 min)
bench-unwind: kernel ustack
	@bench/unwind

# The switch rate of a pipe ping-pong, untraced and traced off-CPU (about 5 min)
bench-offcpu: kernel
	@bench/offcpu

test-debug: deps ustack
	@$(MAKE) -s -C stress
	@$(S)/test-debug

test-mutations: tree
	@$(S)/test-mutations

stress: kernel
	@$(S)/stress-long
