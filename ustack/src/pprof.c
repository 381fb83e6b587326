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
 * location with an address and no line.  Each file is a mapping with its
 * path (and build-id, when the trace gives one); as the trace has file
 * offsets, not addresses, mapping k is placed at k << 40 with file
 * offset 0, so that an address is the mapping's start + the offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "views.h"

#define MAPPING_SHIFT	40

struct strings {
	struct itab	t;
	char		**v;
	size_t		cap;
};

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
		s->v[id] = (char *)str;	/* the views' strings outlive the profile */
	}
	return id;
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
	Perftools__Profiles__Mapping *maps = xcalloc(nm + 1, sizeof(*maps));
	Perftools__Profiles__Mapping **pmaps = xcalloc(nm + 1, sizeof(*pmaps));
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
		      "and pid; addresses are mapping start + file offset");
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

	for (i = 0; i < nm; i++) {
		Perftools__Profiles__Mapping *m = &maps[i];

		perftools__profiles__mapping__init(m);
		m->id = i + 1;
		m->memory_start = (uint64_t)(i + 1) << MAPPING_SHIFT;
		m->memory_limit = m->memory_start + v->maps[i].max_off + 1;
		m->file_offset = 0;
		m->filename = sid(&strs, v->maps[i].path);
		m->build_id = sid(&strs, v->maps[i].build_id);
		pmaps[i] = m;
	}
	prof.n_mapping = nm;
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
		l->mapping_id = vl->mapping;
		l->address = vl->mapping ? ((uint64_t)vl->mapping << MAPPING_SHIFT) + vl->off : vl->off;
		if (vl->mapping && !vl->raw) {
			maps[vl->mapping - 1].has_functions = 1;
			maps[vl->mapping - 1].has_filenames = 1;
			maps[vl->mapping - 1].has_line_numbers = 1;
			maps[vl->mapping - 1].has_inline_frames = 1;
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
	free(funcs);
	free(pfuncs);
	return ret;
}
