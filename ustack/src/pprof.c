// SPDX-License-Identifier: GPL-2.0
/*
 * --pprof FILE.pb.gz: the stacks as a perftools.profiles.Profile
 * (profile.proto of github.com/google/pprof, as Debian ships it), encoded
 * by the code protoc-c generates from it, gzipped with zlib.
 *
 * One sample type, "events"/"count": each sample is a distinct stack of
 * one event name, comm and pid, with labels event, comm (strings) and
 * pid (a number).  Locations are the frames (a location's lines: the
 * inlined calls innermost first, then the function); a raw frame is a
 * location with an address and no line.  Every string goes through
 * text_utf8(), as string_table must be UTF-8.
 *
 * The trace has file offsets.  A file ustack opened has a mapping per
 * PT_LOAD segment that holds frames, as the loader would map it at its
 * own addresses: from p_vaddr for p_memsz, file offset p_offset; a frame
 * at file offset off is at off - p_offset + p_vaddr, the address the
 * binary's symbols use.  go tool pprof needs that address: it looks a
 * location's address up in the binary as it is (its objTool has no load
 * base), for -disasm.  So the mappings of two files may overlap; each
 * location names its own.  The frames of a file not opened, or outside
 * its segments, are in a made-up mapping: the file's index + 1 shifted
 * by 40 bits, file offset 0, a frame at that start + its offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "views.h"

struct strings {
	struct itab	t;
	char		**v;
	size_t		cap;
};

/* A string's index in string_table: each string once, as valid UTF-8 */
static int64_t sid(struct strings *s, const char *str)
{
	bool fresh;
	uint32_t id;

	if (!str)
		str = "";
	id = itab_get(&s->t, str, strlen(str), &fresh);
	if (fresh) {
		if (id >= s->cap) {
			s->cap = s->cap ? s->cap * 2 : 256;
			s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
		}
		s->v[id] = text_utf8(str);
	}
	return id;
}

/* The PT_LOAD of a file that holds file offset off, or m->nloads: none */
static size_t load_of(const struct vmapping *m, uint64_t off)
{
	size_t j;

	for (j = 0; j < m->nloads; j++)
		if (off >= m->loads[j].offset && off - m->loads[j].offset < m->loads[j].filesz)
			return j;
	return m->nloads;
}

/* The start of file i's made-up mapping */
static uint64_t made_up(size_t i)
{
	return (uint64_t)(i + 1) << 40;
}

static int write_gz(const char *path, const uint8_t *buf, size_t len)
{
	struct output *file = output_open(path);
	int err, fd = file ? dup(output_fd(file)) : -1;
	gzFile gz = fd >= 0 ? gzdopen(fd, "wb9") : NULL;

	if (!gz) {
		if (file)
			warnx_("cannot write %s: %s", path, errno ? strerror(errno) : "zlib: out of memory");
		if (fd >= 0)
			close(fd);
		if (file)
			output_abort(file);
		return -1;
	}
	while (len) {
		unsigned int n = len > (1U << 30) ? 1U << 30 : (unsigned int)len;

		if (gzwrite(gz, buf, n) != (int)n) {
			warnx_("cannot write %s: %s", path, gzerror(gz, &err));
			gzclose(gz);
			output_abort(file);
			return -1;
		}
		buf += n;
		len -= n;
	}
	if (gzclose(gz) != Z_OK) {
		warnx_("cannot write %s: %s", path, strerror(errno));
		output_abort(file);
		return -1;
	}
	return output_commit(file);
}

int pprof_write(const struct views *v, const char *path)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *types[1];
	size_t ns = v->stacks_t.n, nl = v->locs_t.n, nm = v->maps_t.n, nf = v->funcs_t.n;
	size_t i, k, nlines = 0;
	Perftools__Profiles__Sample *samples = xcalloc(ns + 1, sizeof(*samples));
	Perftools__Profiles__Sample **psamples = xcalloc(ns + 1, sizeof(*psamples));
	Perftools__Profiles__Label *labels = xcalloc(3 * ns + 1, sizeof(*labels));
	Perftools__Profiles__Label **plabels = xcalloc(3 * ns + 1, sizeof(*plabels));
	uint64_t *loc_ids;
	int64_t *values = xcalloc(ns + 1, sizeof(*values));
	Perftools__Profiles__Location *locs = xcalloc(nl + 1, sizeof(*locs));
	Perftools__Profiles__Location **plocs = xcalloc(nl + 1, sizeof(*plocs));
	Perftools__Profiles__Line *lines, **plines;
	Perftools__Profiles__Mapping *maps, **pmaps;
	size_t *first, *loc_slot, nmaps = 0;
	uint64_t *slot_id;
	Perftools__Profiles__Function *funcs = xcalloc(nf + 1, sizeof(*funcs));
	Perftools__Profiles__Function **pfuncs = xcalloc(nf + 1, sizeof(*pfuncs));
	struct strings strs = { 0 };
	int64_t k_event, k_comm, k_pid, comment;
	size_t total_locs = 0, len;
	uint8_t *buf;
	int ret;

	sid(&strs, "");			/* string_table[0] is "" */
	type.type = sid(&strs, "events");
	type.unit = sid(&strs, "count");
	types[0] = &type;
	prof.n_sample_type = 1;
	prof.sample_type = types;
	prof.period_type = &type;
	prof.period = 1;
	k_event = sid(&strs, "event");
	k_comm = sid(&strs, "comm");
	k_pid = sid(&strs, "pid");
	comment = sid(&strs, "ustack report --pprof: one sample per distinct stack, event, comm "
		      "and pid; addresses are the binaries' own (p_vaddr-based)");
	prof.n_comment = 1;
	prof.comment = &comment;
	if (v->have_ts)
		prof.duration_nanos = (int64_t)((v->ts_max - v->ts_min) * 1e9);

	for (i = 0; i < ns; i++)
		total_locs += v->stacks[i].n;
	loc_ids = xcalloc(total_locs + 1, sizeof(*loc_ids));
	total_locs = 0;
	for (i = 0; i < ns; i++) {
		const struct vstack *s = &v->stacks[i];
		Perftools__Profiles__Sample *smp = &samples[i];

		perftools__profiles__sample__init(smp);
		smp->n_location_id = s->n;
		smp->location_id = loc_ids + total_locs;
		for (k = 0; k < s->n; k++)
			loc_ids[total_locs++] = s->locs[k] + 1;
		values[i] = (int64_t)s->count;
		smp->n_value = 1;
		smp->value = &values[i];
		for (k = 0; k < 3; k++) {
			Perftools__Profiles__Label *l = &labels[3 * i + k];

			perftools__profiles__label__init(l);
			plabels[3 * i + k] = l;
		}
		labels[3 * i].key = k_event;
		labels[3 * i].str = sid(&strs, v->strs[s->event]);
		labels[3 * i + 1].key = k_comm;
		labels[3 * i + 1].str = sid(&strs, v->strs[s->comm]);
		labels[3 * i + 2].key = k_pid;
		labels[3 * i + 2].num = s->pid;
		smp->n_label = 3;
		smp->label = &plabels[3 * i];
		psamples[i] = smp;
	}
	prof.n_sample = ns;
	prof.sample = psamples;

	/*
	 * The mappings: per file, a slot for each PT_LOAD and one for the
	 * made-up mapping; a slot is a mapping when a location is in it.
	 */
	first = xcalloc(nm + 1, sizeof(*first));
	for (i = 0; i < nm; i++)
		first[i + 1] = first[i] + v->maps[i].nloads + 1;
	slot_id = xcalloc(first[nm] + 1, sizeof(*slot_id));
	loc_slot = xcalloc(nl + 1, sizeof(*loc_slot));
	for (i = 0; i < nl; i++) {
		const struct vloc *vl = &v->locs[i];

		if (!vl->mapping)
			continue;
		loc_slot[i] = first[vl->mapping - 1] + load_of(&v->maps[vl->mapping - 1], vl->off);
		slot_id[loc_slot[i]] = 1;
	}
	maps = xcalloc(first[nm] + 1, sizeof(*maps));
	pmaps = xcalloc(first[nm] + 1, sizeof(*pmaps));
	for (i = 0; i < nm; i++) {
		const struct vmapping *vm = &v->maps[i];

		for (k = 0; k <= vm->nloads; k++) {
			size_t slot = first[i] + k;
			Perftools__Profiles__Mapping *m = &maps[nmaps];

			if (!slot_id[slot])
				continue;
			perftools__profiles__mapping__init(m);
			m->id = slot_id[slot] = ++nmaps;
			m->filename = sid(&strs, vm->path);
			m->build_id = sid(&strs, vm->build_id);
			if (k < vm->nloads) {
				m->memory_start = vm->loads[k].vaddr;
				m->memory_limit = m->memory_start + vm->loads[k].memsz;
				m->file_offset = vm->loads[k].offset;
			} else {
				m->memory_start = made_up(i);
				m->memory_limit = m->memory_start + vm->max_off + 1;
			}
			pmaps[nmaps - 1] = m;
		}
	}
	prof.n_mapping = nmaps;
	prof.mapping = pmaps;

	for (i = 0; i < nl; i++)
		nlines += v->locs[i].n;
	lines = xcalloc(nlines + 1, sizeof(*lines));
	plines = xcalloc(nlines + 1, sizeof(*plines));
	nlines = 0;
	for (i = 0; i < nl; i++) {
		const struct vloc *vl = &v->locs[i];
		Perftools__Profiles__Location *l = &locs[i];

		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->address = vl->off;
		if (vl->mapping) {
			const struct vmapping *vm = &v->maps[vl->mapping - 1];
			size_t seg = loc_slot[i] - first[vl->mapping - 1];
			Perftools__Profiles__Mapping *m = &maps[slot_id[loc_slot[i]] - 1];

			l->mapping_id = m->id;
			if (seg < vm->nloads) {
				l->address = vl->off - vm->loads[seg].offset + vm->loads[seg].vaddr;
				/* As pprof wants it: inside the call, not after it */
				if (vl->ret && vl->off > vm->loads[seg].offset)
					l->address--;
			} else {
				l->address = made_up(vl->mapping - 1) + vl->off;
			}
			if (!vl->raw)
				m->has_functions = m->has_filenames = m->has_line_numbers =
					m->has_inline_frames = 1;
		}
		if (!vl->raw) {
			l->n_line = vl->n;
			l->line = plines + nlines;
			for (k = 0; k < vl->n; k++) {
				perftools__profiles__line__init(&lines[nlines]);
				lines[nlines].function_id = vl->lines[k].func + 1;
				lines[nlines].line = vl->lines[k].line;
				plines[nlines] = &lines[nlines];
				nlines++;
			}
		}
		plocs[i] = l;
	}
	prof.n_location = nl;
	prof.location = plocs;

	for (i = 0; i < nf; i++) {
		Perftools__Profiles__Function *f = &funcs[i];

		perftools__profiles__function__init(f);
		f->id = i + 1;
		f->name = sid(&strs, v->funcs[i].name);
		f->system_name = f->name;
		f->filename = sid(&strs, v->funcs[i].src ? v->funcs[i].src : v->funcs[i].file);
		pfuncs[i] = f;
	}
	prof.n_function = nf;
	prof.function = pfuncs;

	prof.n_string_table = strs.t.n;
	prof.string_table = strs.v;

	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&prof, buf);
	ret = write_gz(path, buf, len);

	free(buf);
	for (i = 0; i < strs.t.n; i++)
		free(strs.v[i]);
	free(strs.v);
	itab_free(&strs.t);
	free(samples);
	free(psamples);
	free(labels);
	free(plabels);
	free(loc_ids);
	free(values);
	free(locs);
	free(plocs);
	free(lines);
	free(plines);
	free(maps);
	free(pmaps);
	free(first);
	free(slot_id);
	free(loc_slot);
	free(funcs);
	free(pfuncs);
	return ret;
}
