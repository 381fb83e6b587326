// SPDX-License-Identifier: GPL-2.0
/*
 * ustack: the user_unwind_stack record, decoded from its format alone.
 *
 * The record holds each file of the stack once (inodes[], bases[],
 * devs[]) and, per frame, a 32-bit offset and the index of its file
 * (offsets[], files[]): frame i is offsets[i] bytes past bases[files[i]].
 * The fields are found by name in the event's format, so that a layout
 * that moves them needs no change here.
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "ustack.h"

/* A __data_loc array, by name, checked to lie inside the record */
const unsigned char *field_array(struct tep_event *ev, struct tep_record *r,
					const char *name, size_t elem, size_t *nr,
					const char **why)
{
	struct tep_format_field *f = tep_find_field(ev, name);
	const unsigned char *p, *start = r->data;
	int len = 0;

	if (!f || f->offset < 0 || f->offset + f->size > r->size) {
		*why = "record too short for its arrays";
		return NULL;
	}
	p = tep_get_field_raw(NULL, ev, name, r, &len, 0);
	if (!p || len < 0 || p < start || p + len > start + r->size || (size_t)len % elem) {
		*why = "an array lies outside its record";
		return NULL;
	}
	*nr = (size_t)len / elem;
	return p;
}

/* A fixed field, by name, checked to lie inside the record */
bool field_num(struct tep_event *ev, struct tep_record *r, const char *name,
		      unsigned long long *v, const char **why)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	if (!f || f->offset < 0 || f->size <= 0 || f->offset + f->size > r->size ||
	    tep_read_number_field(f, r->data, v)) {
		*why = "record too short for its fields";
		return false;
	}
	return true;
}

/* The fields stack_decode() reads; NULL if the format has them all */
const char *stack_format_lacks(struct tep_event *ev)
{
	static const char *const fields[] = {
		"cookie", "lost", "inodes", "bases", "devs", "offsets", "files",
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!tep_find_field(ev, fields[i]))
			return fields[i];
	return NULL;
}

bool stack_decode(struct tep_event *ev, struct tep_record *r, struct stack_frames *out,
		  const char **why)
{
	const unsigned char *ino, *base, *dev, *off, *idx;
	size_t nino, nbase, ndev, noff, nidx;
	struct tep_handle *tep = ev->tep;
	unsigned long long cookie, lost;

	if (!field_num(ev, r, "cookie", &cookie, why) || !field_num(ev, r, "lost", &lost, why))
		return false;
	if (!(ino = field_array(ev, r, "inodes", 8, &nino, why)) ||
	    !(base = field_array(ev, r, "bases", 8, &nbase, why)) ||
	    !(dev = field_array(ev, r, "devs", 4, &ndev, why)) ||
	    !(off = field_array(ev, r, "offsets", 4, &noff, why)) ||
	    !(idx = field_array(ev, r, "files", 2, &nidx, why)))
		return false;
	if (nino != nbase || nino != ndev) {
		*why = "files with unequal numbers of inodes, bases and devices";
		return false;
	}
	if (noff != nidx) {
		*why = "frames with unequal numbers of offsets and files";
		return false;
	}
	if (noff > out->cap) {
		out->cap = noff * 2;
		out->frames = xrealloc(out->frames, out->cap * sizeof(*out->frames));
	}
	for (size_t i = 0; i < noff; i++) {
		unsigned long long k = tep_read_number(tep, idx + 2 * i, 2);

		if (k >= nino) {
			*why = "a frame's file is not in the record";
			return false;
		}
		out->frames[i].off = tep_read_number(tep, base + 8 * k, 8) +
				     tep_read_number(tep, off + 4 * i, 4);
		out->frames[i].ino = tep_read_number(tep, ino + 8 * k, 8);
		out->frames[i].dev = (uint32_t)tep_read_number(tep, dev + 4 * k, 4);
		out->frames[i].cfi = false;
	}
	if (nino > out->files_cap) {
		out->files_cap = nino * 2;
		out->inodes = xrealloc(out->inodes, out->files_cap * sizeof(*out->inodes));
		out->bases = xrealloc(out->bases, out->files_cap * sizeof(*out->bases));
		out->devs = xrealloc(out->devs, out->files_cap * sizeof(*out->devs));
	}
	for (size_t k = 0; k < nino; k++) {
		out->inodes[k] = tep_read_number(tep, ino + 8 * k, 8);
		out->bases[k] = tep_read_number(tep, base + 8 * k, 8);
		out->devs[k] = (uint32_t)tep_read_number(tep, dev + 4 * k, 4);
	}
	out->nfiles = nino;
	out->nr = noff;
	out->cookie = cookie;
	out->lost = lost;
	return true;
}

void stack_frames_free(struct stack_frames *sf)
{
	free(sf->frames);
	free(sf->inodes);
	free(sf->bases);
	free(sf->devs);
	memset(sf, 0, sizeof(*sf));
}
