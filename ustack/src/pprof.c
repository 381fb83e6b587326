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

/*
 * The profile goes out in parts, each a Profile message of its own,
 * packed straight into the gzip stream: protobuf reads concatenated
 * messages as one, their repeated fields appended in order.  So only one
 * part of the samples or locations is in memory at a time, and the string
 * table, which the parts before it fill, comes last.
 */
#define PART	1024

struct gz_out {
	ProtobufCBuffer	base;
	gzFile		gz;
	bool		failed;
};

static void gz_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct gz_out *o = (struct gz_out *)buf;

	while (len && !o->failed) {
		unsigned int n = len > (1U << 30) ? 1U << 30 : (unsigned int)len;

		if (gzwrite(o->gz, data, n) != (int)n)
			o->failed = true;
		data += n;
		len -= n;
	}
}

static void put_part(struct gz_out *o, const Perftools__Profiles__Profile *part)
{
	perftools__profiles__profile__pack_to_buffer(part, &o->base);
}

struct writer {
	const struct views	*v;
	struct gz_out		out;
	struct strings		strs;
	size_t			*first;		/* per file, its first mapping slot */
	uint64_t		*slot_id;	/* per slot, its mapping id; 0: none */
	bool			*slot_lines;	/* per slot, a location with lines */
};

/* The samples, PART at a time: one per distinct stack, with labels */
static void put_samples(struct writer *w)
{
	const struct views *v = w->v;
	Perftools__Profiles__Sample samples[PART], *psamples[PART];
	Perftools__Profiles__Label labels[3 * PART], *plabels[3 * PART];
	int64_t values[PART], k_event = sid(&w->strs, "event");
	int64_t k_comm = sid(&w->strs, "comm"), k_pid = sid(&w->strs, "pid");
	uint64_t *loc_ids = NULL;
	size_t i, k, n, cap = 0, used;

	for (i = 0; i < v->stacks_t.n; i += n) {
		Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;

		n = v->stacks_t.n - i < PART ? v->stacks_t.n - i : PART;
		for (k = used = 0; k < n; k++)
			used += v->stacks[i + k].n;
		if (used > cap) {
			cap = used;
			loc_ids = xrealloc(loc_ids, cap * sizeof(*loc_ids));
		}
		for (k = used = 0; k < n; k++) {
			const struct vstack *s = &v->stacks[i + k];
			Perftools__Profiles__Sample *smp = &samples[k];
			Perftools__Profiles__Label *l = &labels[3 * k];
			size_t j;

			perftools__profiles__sample__init(smp);
			smp->n_location_id = s->n;
			smp->location_id = loc_ids + used;
			for (j = 0; j < s->n; j++)
				loc_ids[used++] = s->locs[j] + 1;
			values[k] = (int64_t)s->count;
			smp->n_value = 1;
			smp->value = &values[k];
			for (j = 0; j < 3; j++) {
				perftools__profiles__label__init(&l[j]);
				plabels[3 * k + j] = &l[j];
			}
			l[0].key = k_event;
			l[0].str = sid(&w->strs, v->strs[s->event]);
			l[1].key = k_comm;
			l[1].str = sid(&w->strs, v->strs[s->comm]);
			l[2].key = k_pid;
			l[2].num = s->pid;
			smp->n_label = 3;
			smp->label = &plabels[3 * k];
			psamples[k] = smp;
		}
		part.n_sample = n;
		part.sample = psamples;
		put_part(&w->out, &part);
	}
	free(loc_ids);
}

/*
 * The mappings: per file, a slot for each PT_LOAD and one for the
 * made-up mapping; a slot is a mapping when a location is in it.
 */
static void put_mappings(struct writer *w)
{
	const struct views *v = w->v;
	Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t nm = v->maps_t.n, i, k, nmaps = 0;
	Perftools__Profiles__Mapping *maps, **pmaps;

	w->first = xcalloc(nm + 1, sizeof(*w->first));
	for (i = 0; i < nm; i++)
		w->first[i + 1] = w->first[i] + v->maps[i].nloads + 1;
	w->slot_id = xcalloc(w->first[nm] + 1, sizeof(*w->slot_id));
	w->slot_lines = xcalloc(w->first[nm] + 1, sizeof(*w->slot_lines));
	for (i = 0; i < v->locs_t.n; i++) {
		const struct vloc *vl = &v->locs[i];
		size_t slot;

		if (!vl->mapping)
			continue;
		slot = w->first[vl->mapping - 1] + load_of(&v->maps[vl->mapping - 1], vl->off);
		w->slot_id[slot] = 1;
		if (!vl->raw)
			w->slot_lines[slot] = true;
	}
	maps = xcalloc(w->first[nm] + 1, sizeof(*maps));
	pmaps = xcalloc(w->first[nm] + 1, sizeof(*pmaps));
	for (i = 0; i < nm; i++) {
		const struct vmapping *vm = &v->maps[i];

		for (k = 0; k <= vm->nloads; k++) {
			size_t slot = w->first[i] + k;
			Perftools__Profiles__Mapping *m = &maps[nmaps];

			if (!w->slot_id[slot])
				continue;
			perftools__profiles__mapping__init(m);
			m->id = w->slot_id[slot] = ++nmaps;
			m->filename = sid(&w->strs, vm->path);
			m->build_id = sid(&w->strs, vm->build_id);
			if (k < vm->nloads) {
				m->memory_start = vm->loads[k].vaddr;
				m->memory_limit = m->memory_start + vm->loads[k].memsz;
				m->file_offset = vm->loads[k].offset;
			} else {
				m->memory_start = made_up(i);
				m->memory_limit = m->memory_start + vm->max_off + 1;
			}
			m->has_functions = m->has_filenames = m->has_line_numbers =
				m->has_inline_frames = w->slot_lines[slot];
			pmaps[nmaps - 1] = m;
		}
	}
	part.n_mapping = nmaps;
	part.mapping = pmaps;
	put_part(&w->out, &part);
	free(maps);
	free(pmaps);
}

/* The locations, PART at a time: a frame's address and its lines */
static void put_locations(struct writer *w)
{
	const struct views *v = w->v;
	Perftools__Profiles__Location locs[PART], *plocs[PART];
	Perftools__Profiles__Line *lines = NULL, **plines = NULL;
	size_t i, k, n, cap = 0, used;

	for (i = 0; i < v->locs_t.n; i += n) {
		Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;

		n = v->locs_t.n - i < PART ? v->locs_t.n - i : PART;
		for (k = used = 0; k < n; k++)
			used += v->locs[i + k].n;
		if (used > cap) {
			cap = used;
			lines = xrealloc(lines, cap * sizeof(*lines));
			plines = xrealloc(plines, cap * sizeof(*plines));
		}
		for (k = used = 0; k < n; k++) {
			const struct vloc *vl = &v->locs[i + k];
			Perftools__Profiles__Location *l = &locs[k];
			size_t j;

			perftools__profiles__location__init(l);
			l->id = i + k + 1;
			l->address = vl->off;
			if (vl->mapping) {
				const struct vmapping *vm = &v->maps[vl->mapping - 1];
				size_t seg = load_of(vm, vl->off);

				l->mapping_id = w->slot_id[w->first[vl->mapping - 1] + seg];
				if (seg < vm->nloads) {
					l->address = vl->off - vm->loads[seg].offset + vm->loads[seg].vaddr;
					/* As pprof wants it: inside the call, not after it */
					if (vl->ret && vl->off > vm->loads[seg].offset)
						l->address--;
				} else {
					l->address = made_up(vl->mapping - 1) + vl->off;
				}
			}
			if (!vl->raw) {
				l->n_line = vl->n;
				l->line = plines + used;
				for (j = 0; j < vl->n; j++) {
					perftools__profiles__line__init(&lines[used]);
					lines[used].function_id = vl->lines[j].func + 1;
					lines[used].line = vl->lines[j].line;
					plines[used] = &lines[used];
					used++;
				}
			}
			plocs[k] = l;
		}
		part.n_location = n;
		part.location = plocs;
		put_part(&w->out, &part);
	}
	free(lines);
	free(plines);
}

static void put_functions(struct writer *w)
{
	const struct views *v = w->v;
	Perftools__Profiles__Function funcs[PART], *pfuncs[PART];
	size_t i, k, n;

	for (i = 0; i < v->funcs_t.n; i += n) {
		Perftools__Profiles__Profile part = PERFTOOLS__PROFILES__PROFILE__INIT;

		n = v->funcs_t.n - i < PART ? v->funcs_t.n - i : PART;
		for (k = 0; k < n; k++) {
			const struct vfunc *vf = &v->funcs[i + k];
			Perftools__Profiles__Function *f = &funcs[k];

			perftools__profiles__function__init(f);
			f->id = i + k + 1;
			f->name = sid(&w->strs, vf->name);
			f->system_name = f->name;
			f->filename = sid(&w->strs, vf->src ? vf->src : vf->file);
			pfuncs[k] = f;
		}
		part.n_function = n;
		part.function = pfuncs;
		put_part(&w->out, &part);
	}
}

int pprof_write(const struct views *v, const char *path)
{
	Perftools__Profiles__Profile head = PERFTOOLS__PROFILES__PROFILE__INIT, tail = head;
	Perftools__Profiles__ValueType type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *types[1];
	struct writer w = { .v = v, .out.base.append = gz_append };
	struct output *file = output_open(path);
	int64_t comment;
	int err, fd, ret = -1;
	size_t i;

	if (!file)
		return -1;
	fd = dup(output_fd(file));
	w.out.gz = fd >= 0 ? gzdopen(fd, "wb9") : NULL;
	if (!w.out.gz) {
		warnx_("cannot write %s: %s", path, errno ? strerror(errno) : "zlib: out of memory");
		if (fd >= 0)
			close(fd);
		output_abort(file);
		return -1;
	}

	sid(&w.strs, "");		/* string_table[0] is "" */
	type.type = sid(&w.strs, v->sample_type);
	type.unit = sid(&w.strs, v->sample_unit);
	types[0] = &type;
	head.n_sample_type = 1;
	head.sample_type = types;
	head.period_type = &type;
	head.period = 1;
	/* the labels' keys, as put_samples interns them: the same indexes */
	sid(&w.strs, "event");
	sid(&w.strs, "comm");
	sid(&w.strs, "pid");
	comment = sid(&w.strs, "ustack report --pprof: one sample per distinct stack, event, comm "
		      "and pid; addresses are the binaries' own (p_vaddr-based)");
	head.n_comment = 1;
	head.comment = &comment;
	if (v->have_ts)
		head.duration_nanos = (int64_t)((v->ts_max - v->ts_min) * 1e9);
	put_part(&w.out, &head);
	put_samples(&w);
	put_mappings(&w);
	put_locations(&w);
	put_functions(&w);
	tail.n_string_table = w.strs.t.n;
	tail.string_table = w.strs.v;
	put_part(&w.out, &tail);

	if (w.out.failed) {
		warnx_("cannot write %s: %s", path, gzerror(w.out.gz, &err));
		gzclose(w.out.gz);
		output_abort(file);
	} else if (gzclose(w.out.gz) != Z_OK) {
		warnx_("cannot write %s: %s", path, strerror(errno));
		output_abort(file);
	} else {
		ret = output_commit(file);
	}
	for (i = 0; i < w.strs.t.n; i++)
		free(w.strs.v[i]);
	free(w.strs.v);
	itab_free(&w.strs.t);
	free(w.first);
	free(w.slot_id);
	free(w.slot_lines);
	return ret;
}
