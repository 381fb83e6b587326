// SPDX-License-Identifier: GPL-2.0
/*
 * --flamegraph FILE.html: one self-contained HTML file (inline CSS and
 * JS, no URL at all), the stacks as a tree: all -> comm -> outermost
 * function -> ... -> innermost, each node with its count of events.
 * The page draws each frame as a <div class="f"> positioned in pixels,
 * with data-name, data-count, data-depth, data-class and data-path (the
 * names from "all", joined by ';'), so that a test can find them; a click zooms to a frame, a search box highlights the
 * frames whose name holds the text, hovering says name, count and %.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

struct fnode {
	uint32_t	name;		/* index in the page's names */
	unsigned long	count;
	uint32_t	first, next;	/* index + 1; 0: none */
};

struct tree {
	struct fnode	*v;
	size_t		n, cap;
	struct map	*kids;		/* (parent, name) -> index + 1 */
};

static uint32_t child(struct tree *t, uint32_t parent, uint32_t name)
{
	uintptr_t k = (uintptr_t)map_get(t->kids, parent, name);

	if (k)
		return (uint32_t)(k - 1);
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n].name = name;
	t->v[t->n].count = 0;
	t->v[t->n].first = 0;
	t->v[t->n].next = t->v[parent].first;
	t->v[parent].first = (uint32_t)t->n + 1;
	map_put(t->kids, parent, name, (void *)(uintptr_t)(t->n + 1));
	return (uint32_t)t->n++;
}

struct emit {
	const struct tree	*t;
	const char		**names;
	FILE			*out;
};

static int cmp_kid(const void *a, const void *b, void *ctx)
{
	const struct emit *e = ctx;
	const struct fnode *x = &e->t->v[*(const uint32_t *)a], *y = &e->t->v[*(const uint32_t *)b];
	int c = strcmp(e->names[x->name], e->names[y->name]);

	return c ? c : (x->name > y->name) - (x->name < y->name);
}

/* [name, count] or [name, count, [children...]], children by name */
static void emit_node(struct emit *e, uint32_t i)
{
	const struct fnode *n = &e->t->v[i];
	uint32_t *kids = NULL, k;
	size_t nk = 0, j;

	fprintf(e->out, "[%u,%lu", n->name, n->count);
	for (k = n->first; k; k = e->t->v[k - 1].next)
		nk++;
	if (nk) {
		kids = xmalloc(nk * sizeof(*kids));
		nk = 0;
		for (k = n->first; k; k = e->t->v[k - 1].next)
			kids[nk++] = k - 1;
		qsort_r(kids, nk, sizeof(*kids), cmp_kid, e);
		fputs(",[", e->out);
		for (j = 0; j < nk; j++) {
			if (j)
				fputc(',', e->out);
			emit_node(e, kids[j]);
		}
		fputc(']', e->out);
		free(kids);
	}
	fputc(']', e->out);
}

static const char PAGE_HEAD[] =
"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>ustack flame graph</title>\n<style>\n"
"body{font:13px sans-serif;margin:8px;background:#fff;color:#000}\n"
"#bar{display:flex;gap:12px;align-items:center;margin-bottom:6px;flex-wrap:wrap}\n"
"#fg{position:relative;width:100%;overflow:hidden}\n"
".f{position:absolute;box-sizing:border-box;height:17px;border:1px solid #fff;"
"overflow:hidden;white-space:nowrap;font:11px monospace;line-height:15px;padding:0 2px;"
"cursor:pointer}\n"
".f:hover{border-color:#000}\n"
".c-program{background:#f08a4b}.c-library{background:#e8c547}.c-anon{background:#6cc3d5}"
".c-raw{background:#b0b0b0}.c-nostack{background:#c39bd3}.c-other{background:#9ccc65}"
".c-root{background:#dcdcdc}\n"
".f.above{opacity:.55}\n"
".f.match{background:#e040fb;color:#fff}\n"
".key{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:3px}\n"
"#legend{margin-bottom:6px}\n"
"#status{font:12px monospace;min-height:16px;margin-top:6px;white-space:pre}\n"
"</style></head><body>\n";

/* The script of the page: data in N, K, CL, T, TITLE, written before it */
static const char PAGE_JS[] =
"(function(){\n"
"var H=17,fg=document.getElementById('fg'),st=document.getElementById('status');\n"
"var sb=document.getElementById('search'),mt=document.getElementById('matched');\n"
"function build(t,p,d){var n={name:N[t[0]],cls:CL[K[t[0]]],v:t[1],kids:[],parent:p,depth:d,\n"
" path:p.path+';'+N[t[0]]};\n"
" if(t[2])for(var i=0;i<t[2].length;i++)n.kids.push(build(t[2][i],n,d+1));return n;}\n"
"var root={name:'all',cls:'root',v:T[1],kids:[],parent:null,depth:0,path:'all'};\n"
"if(T[2])for(var i=0;i<T[2].length;i++)root.kids.push(build(T[2][i],root,1));\n"
"var maxd=0;(function md(n){if(n.depth>maxd)maxd=n.depth;n.kids.forEach(md);})(root);\n"
"var zoomed=root,term='';\n"
"function pct(v){return root.v?(100*v/root.v).toFixed(2):'0.00';}\n"
"function label(n){return n.name+' ('+n.v+' event'+(n.v==1?'':'s')+', '+pct(n.v)+'%)';}\n"
"function hit(n){return term!==''&&n.name.indexOf(term)>=0;}\n"
"function frame(n,x,w,above){var e=document.createElement('div');\n"
" e.className='f c-'+n.cls+(above?' above':'')+(hit(n)?' match':'');\n"
" e.style.left=x+'px';e.style.width=w+'px';e.style.top=((maxd-n.depth)*H)+'px';\n"
" e.dataset.name=n.name;e.dataset.count=n.v;e.dataset.depth=n.depth;e.dataset.class=n.cls;\n"
" e.dataset.path=n.path;\n"
" e.title=label(n);e.textContent=w>=24?n.name:'';e.fgnode=n;fg.appendChild(e);}\n"
"function draw(n,x,scale){var w=n.v*scale;if(w<0.2)return;frame(n,x,w,false);\n"
" var cx=x;for(var i=0;i<n.kids.length;i++){draw(n.kids[i],cx,scale);cx+=n.kids[i].v*scale;}}\n"
"function render(){fg.innerHTML='';fg.style.height=((maxd+1)*H)+'px';\n"
" var W=fg.clientWidth;for(var a=zoomed.parent;a;a=a.parent)frame(a,0,W,true);\n"
" if(zoomed.v)draw(zoomed,0,W/zoomed.v);\n"
" document.getElementById('zoom').textContent=zoomed===root?'':'zoomed to '+label(zoomed);}\n"
"function zoom(n){zoomed=n;render();}\n"
"window.ustackZoom=zoom;window.ustackRoot=root;\n"
"fg.addEventListener('click',function(ev){var n=ev.target.fgnode;if(n)zoom(n);});\n"
"fg.addEventListener('mousemove',function(ev){var n=ev.target.fgnode;st.textContent=n?label(n):'';});\n"
"fg.addEventListener('mouseleave',function(){st.textContent='';});\n"
"document.getElementById('reset').addEventListener('click',function(){zoom(root);});\n"
"function search(){term=sb.value;var m=0;\n"
" (function walk(n){if(hit(n)){m+=n.v;return;}n.kids.forEach(walk);})(root);\n"
" mt.textContent=term===''?'':'matched: '+m+' events, '+pct(m)+'%';render();}\n"
"sb.addEventListener('input',search);\n"
"document.getElementById('clear').addEventListener('click',function(){sb.value='';search();});\n"
"window.addEventListener('resize',render);\n"
"document.title=TITLE;document.getElementById('title').textContent=TITLE;render();\n"
"})();\n";

int flame_write(const struct views *v, const char *path)
{
	size_t nf = v->funcs_t.n, ns = v->strs_t.n, i, j, n, cap = 0;
	struct tree t = { 0 };
	const char **names;
	uint32_t *seq = NULL, node;
	struct emit e;
	struct output *file;
	FILE *out;

	t.kids = map_new();
	t.cap = 256;
	t.v = xcalloc(t.cap, sizeof(*t.v));
	t.n = 1;			/* the root */
	/* names: the functions, then the strings (comms) */
	names = xcalloc(nf + ns + 1, sizeof(*names));
	for (i = 0; i < nf; i++)
		names[i] = v->funcs[i].name;
	for (i = 0; i < ns; i++)
		names[nf + i] = v->strs[i];
	for (i = 0; i < v->stacks_t.n; i++) {
		const struct vstack *s = &v->stacks[i];

		n = views_seq(v, s, &seq, &cap);
		t.v[0].count += s->count;
		node = child(&t, 0, (uint32_t)(nf + s->comm));
		t.v[node].count += s->count;
		for (j = 0; j < n; j++) {
			node = child(&t, node, seq[j]);
			t.v[node].count += s->count;
		}
	}
	free(seq);

	file = output_open(path);
	if (!file)
		goto fail;
	out = output_stream(file);
	fputs(PAGE_HEAD, out);
	fputs("<div id=\"bar\"><b id=\"title\"></b>\n"
	      "<button id=\"reset\" type=\"button\">Reset zoom</button>\n"
	      "<label>Search <input id=\"search\" type=\"search\" size=\"24\"></label>"
	      "<button id=\"clear\" type=\"button\">Clear</button>\n"
	      "<span id=\"matched\"></span><span id=\"zoom\"></span></div>\n<div id=\"legend\">", out);
	for (i = 0; i < VC_N; i++)
		fprintf(out, "<span><span class=\"key c-%s\"></span>%s</span> ", vclass_names[i],
			i == VC_PROGRAM ? "program" : i == VC_LIBRARY ? "libraries" :
			i == VC_ANON ? "vdso / anonymous" : i == VC_RAW ? "raw (not symbolised)" :
			i == VC_NOSTACK ? "[no user stack]" : "comm, [cut]");
	fputs("</div>\n<div id=\"fg\"></div>\n<div id=\"status\"></div>\n<script>\n", out);
	fputs("var N=[", out);
	for (i = 0; i < nf + ns; i++) {
		if (i)
			fputc(',', out);
		text_js(out, names[i]);
	}
	fputs("];\nvar K=[", out);
	for (i = 0; i < nf + ns; i++)
		fprintf(out, "%s%d", i ? "," : "", i < nf ? (int)v->funcs[i].cls : (int)VC_OTHER);
	fputs("];\nvar CL=[", out);
	for (i = 0; i < VC_N; i++)
		fprintf(out, "%s\"%s\"", i ? "," : "", vclass_names[i]);
	fprintf(out, "];\nvar TITLE=\"ustack: %lu events\";\nvar T=", v->total);
	e.t = &t;
	e.names = names;
	e.out = out;
	t.v[0].name = 0;
	emit_node(&e, 0);
	fputs(";\n", out);
	fputs(PAGE_JS, out);
	fputs("</script>\n</body></html>\n", out);
	if (output_commit(file))
		goto fail;
	free(names);
	free(t.v);
	map_free(t.kids, NULL);
	return 0;
fail:
	free(names);
	free(t.v);
	map_free(t.kids, NULL);
	return -1;
}
