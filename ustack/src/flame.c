// SPDX-License-Identifier: GPL-2.0
/*
 * --flamegraph FILE.html: one self-contained HTML file (inline CSS and
 * JS, no URL at all), the stacks as a tree: all -> comm -> outermost
 * function -> ... -> innermost, each node with its count of events.
 *
 * The page draws each frame as a <div class="f"> whose box is exactly
 * count / total * the graph's width (no border, no padding), with
 * data-path (the names from "all", joined by ';'), data-count, data-name,
 * data-obj and data-class, so that a test can find them.  A frame
 * narrower than MIN_WIDTH px in the current view is not drawn, and a line
 * says how many frames were left out and what share of the events in view
 * they hold.  Frames are coloured by their object file (a hue hashed from
 * its name), inlined calls are striped; a click zooms, a regex search
 * highlights, hovering tells name, count, %, object file and source line.
 *
 * The file holds only the frames that can be drawn at the widest graph
 * (MAX_WIDTH px, the page's limit), plus the most frequent others while
 * there are fewer than MAX_NODES frames (USTACK_FLAME_MAX_NODES, for the
 * tests); each frame kept says how many frames of its callees were left
 * out of the file and their events.
 */
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "views.h"

#define MIN_WIDTH	0.1	/* px, as flamegraph.pl's --minwidth */
#define MAX_WIDTH	4096	/* px, the graph's largest width */
#define MAX_NODES	100000

struct fnode {
	uint32_t	name;		/* funcs, then strs (comms) */
	uint32_t	first, next;	/* index + 1; 0: none */
	int		line_min, line_max;	/* 0: no line */
	unsigned long	count;
	unsigned long	inlined;	/* events in which it is an inlined call */
	unsigned long	pruned_frames;	/* of its callees, left out of the file */
	unsigned long	pruned_events;
};

/*
 * The tree is built by walking the stacks sorted by comm, then functions
 * from the outermost: a stack shares its path with the one before up to
 * their first difference, so no table of children is needed, and a frame's
 * count is final when the walk leaves it.  The first walk counts the
 * frames of each count, which sets the least count kept; the second makes
 * only the frames kept (a frame left when its count is below that is
 * undone, with its callees, which come after it).
 */
struct open_frame {
	uint32_t	name;
	uint32_t	node;		/* second walk: its node */
	unsigned long	count;
	unsigned long	frames;		/* in its subtree, itself included */
};

struct walk {
	const struct views	*v;
	uint32_t		*order;		/* the stacks, sorted */
	struct vseq		*seq, *seq2;
	size_t			cap, cap2;
	struct open_frame	*path;
	size_t			depth, path_cap;
	/* the first walk: frames by count, exact below SMALL_COUNTS */
	uint32_t		*small;
	GArray			*large;
	size_t			nodes;
	unsigned long		total;		/* the root's count */
	/* the second */
	struct fnode		*t;
	size_t			n, tcap;
	unsigned long		keep;
};

#define SMALL_COUNTS	(1UL << 20)

static int cmp_stack(const void *a, const void *b, void *ctx)
{
	struct walk *w = ctx;
	const struct vstack *x = &w->v->stacks[*(const uint32_t *)a];
	const struct vstack *y = &w->v->stacks[*(const uint32_t *)b];
	size_t nx, ny, i;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	nx = views_seq_lines(w->v, x, &w->seq, &w->cap);
	ny = views_seq_lines(w->v, y, &w->seq2, &w->cap2);
	for (i = 0; i < nx && i < ny; i++)
		if (w->seq[i].func != w->seq2[i].func)
			return w->seq[i].func < w->seq2[i].func ? -1 : 1;
	return (nx > ny) - (nx < ny);
}

static void count_frame(struct walk *w, unsigned long count)
{
	w->nodes++;
	if (count < SMALL_COUNTS)
		w->small[count]++;
	else
		g_array_append_val(w->large, count);
}

static uint32_t new_node(struct walk *w, uint32_t parent, uint32_t name)
{
	struct fnode *n;

	if (w->n == w->tcap) {
		w->tcap = w->tcap ? w->tcap * 2 : 256;
		w->t = xrealloc(w->t, w->tcap * sizeof(*w->t));
	}
	n = &w->t[w->n];
	memset(n, 0, sizeof(*n));
	n->name = name;
	if (w->n) {
		n->next = w->t[parent].first;
		w->t[parent].first = (uint32_t)w->n + 1;
	}
	return (uint32_t)w->n++;
}

/* Leave the open frames down to depth: their counts are final */
static void close_to(struct walk *w, size_t depth, bool build)
{
	while (w->depth > depth) {
		struct open_frame *f = &w->path[--w->depth];
		uint32_t parent = w->depth ? w->path[w->depth - 1].node : 0;

		if (w->depth)
			w->path[w->depth - 1].frames += f->frames;
		if (!build) {
			count_frame(w, f->count);
		} else if (f->count < w->keep) {
			/* the parent's newest child, and its callees after it */
			w->t[parent].first = w->t[f->node].next;
			w->n = f->node;
			w->t[parent].pruned_frames += f->frames;
			w->t[parent].pruned_events += f->count;
		}
	}
}

static void add_line(struct fnode *n, int line)
{
	if (line <= 0)
		return;
	if (!n->line_min || line < n->line_min)
		n->line_min = line;
	if (line > n->line_max)
		n->line_max = line;
}

/* One walk over the sorted stacks; the second (build) makes the tree */
static void walk(struct walk *w, bool build)
{
	size_t nf = w->v->funcs_t.n, i, j, n, common;

	w->depth = 0;
	if (build)
		new_node(w, 0, 0);	/* the root, "all" */
	for (i = 0; i < w->v->stacks_t.n; i++) {
		const struct vstack *s = &w->v->stacks[w->order[i]];

		n = views_seq_lines(w->v, s, &w->seq, &w->cap) + 1;
		if (n > w->path_cap) {
			w->path_cap = n * 2;
			w->path = xrealloc(w->path, w->path_cap * sizeof(*w->path));
		}
		/* path[0] is the comm, path[j] the function seq[j - 1] */
		for (common = 0; common < w->depth && common < n; common++)
			if (w->path[common].name != (common ? w->seq[common - 1].func :
							 (uint32_t)(nf + s->comm)))
				break;
		close_to(w, common, build);
		for (j = common; j < n; j++) {
			struct open_frame *f = &w->path[j];

			f->name = j ? w->seq[j - 1].func : (uint32_t)(nf + s->comm);
			f->count = 0;
			f->frames = 1;
			if (build)
				f->node = new_node(w, j ? w->path[j - 1].node : 0, f->name);
		}
		w->depth = n;
		for (j = 0; j < n; j++) {
			w->path[j].count += s->count;
			if (!build)
				continue;
			w->t[w->path[j].node].count += s->count;
			if (j && w->seq[j - 1].inlined)
				w->t[w->path[j].node].inlined += s->count;
			if (j)
				add_line(&w->t[w->path[j].node], w->seq[j - 1].line);
		}
		if (build)
			w->t[0].count += s->count;
		else
			w->total += s->count;
	}
	close_to(w, 0, build);
}

static int cmp_count_desc(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return (x < y) - (x > y);
}

/*
 * The least count a frame needs to be in the file: every frame that is at
 * least MIN_WIDTH px wide in a MAX_WIDTH px graph, and more while the
 * frames number at most max_nodes.  Counts only grow towards the root, so
 * the frames kept are whole paths from it.
 */
static unsigned long keep_threshold(struct walk *w, size_t max_nodes)
{
	unsigned long need = (unsigned long)((double)w->total * MIN_WIDTH / MAX_WIDTH);
	unsigned long budget = 0, c;
	size_t seen = 0, i;

	if (need < 1)
		need = 1;
	count_frame(w, w->total);	/* the root */
	if (w->nodes <= max_nodes)
		return 1;
	/* budget: one more than the count of the frame max_nodes + 1 by count */
	g_array_sort(w->large, cmp_count_desc);
	for (i = 0; i < w->large->len && !budget; i++)
		if (seen++ == max_nodes)
			budget = g_array_index(w->large, unsigned long, i) + 1;
	for (c = SMALL_COUNTS; c-- > 0 && !budget;) {
		seen += w->small[c];
		if (seen > max_nodes)
			budget = c + 1;
	}
	return budget < need ? budget : need;
}

struct emit {
	const struct views	*v;
	const struct fnode	*t;
	const char		**names;	/* of funcs, then of strs */
	uint32_t		*remap;		/* name -> index in the page's N + 1 */
	uint32_t		*used;		/* the names, in that order */
	size_t			nused, nkept;
	GString			*tree, *lines, *inl, *pruned;
};

static int cmp_kid(const void *a, const void *b, void *ctx)
{
	const struct emit *e = ctx;
	const struct fnode *x = &e->t[*(const uint32_t *)a], *y = &e->t[*(const uint32_t *)b];
	int c = strcmp(e->names[x->name], e->names[y->name]);

	return c ? c : (x->name > y->name) - (x->name < y->name);
}

/*
 * Preorder, children by name: T gets name, count, number of children
 * kept; L the lines; I (sparse) the inlined frames; P (sparse) the
 * frames and events of the callees left out of the file.
 */
static void emit_node(struct emit *e, uint32_t i)
{
	const struct fnode *n = &e->t[i];
	size_t nk = 0, j, index = e->nkept++;
	uint32_t *kids = NULL, k, name = 0;

	for (k = n->first; k; k = e->t[k - 1].next)
		nk++;
	if (nk) {
		kids = xmalloc(nk * sizeof(*kids));
		nk = 0;
		for (k = n->first; k; k = e->t[k - 1].next)
			kids[nk++] = k - 1;
		qsort_r(kids, nk, sizeof(*kids), cmp_kid, e);
	}
	if (i) {
		if (!e->remap[n->name]) {
			e->used[e->nused++] = n->name;
			e->remap[n->name] = (uint32_t)e->nused;
		}
		name = e->remap[n->name] - 1;
	}
	g_string_append_printf(e->tree, "%s%u,%lu,%zu", index ? "," : "", name, n->count, nk);
	g_string_append_printf(e->lines, "%s%d,%d", index ? "," : "", n->line_min,
			       n->line_max - n->line_min);
	if (n->inlined)
		g_string_append_printf(e->inl, "%s%zu,%d", e->inl->len ? "," : "", index,
				       n->inlined == n->count ? 1 : 2);
	if (n->pruned_frames)
		g_string_append_printf(e->pruned, "%s%zu,%lu,%lu", e->pruned->len ? "," : "", index,
				       n->pruned_frames, n->pruned_events);
	for (j = 0; j < nk; j++)
		emit_node(e, kids[j]);
	free(kids);
}

static const char PAGE_HEAD[] =
"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>ustack flame graph</title>\n<style>\n"
"body{font:13px sans-serif;margin:8px;background:#fff;color:#000}\n"
"#bar{display:flex;gap:12px;align-items:center;margin-bottom:6px;flex-wrap:wrap}\n"
"#fg{position:relative;width:100%;max-width:4096px;overflow:hidden}\n"
/* no border, no padding: the box is the frame's true width */
".f{position:absolute;height:15px;overflow:hidden;white-space:nowrap;font:11px monospace;"
"line-height:15px;text-indent:2px;cursor:pointer}\n"
".f.sep{box-shadow:inset -1px 0 rgba(255,255,255,.6)}\n"
".f:hover{outline:1px solid #000;z-index:1}\n"
".inl{background-image:repeating-linear-gradient(135deg,rgba(255,255,255,.45) 0 2px,transparent 2px 5px);"
"font-style:italic}\n"
".f.above{opacity:.55}\n"
".f.match{background-color:#e040fb!important;color:#fff}\n"
/* searching: what does not match fades, whatever its hue */
"#fg.searching .f:not(.match){opacity:.3}\n"
".key{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:3px}\n"
"#legend{margin-bottom:6px}#legend>span{margin-right:10px;white-space:nowrap}\n"
"#status,#leftout{font:12px monospace;min-height:16px;margin-top:6px;white-space:pre}\n"
"#matched.bad{color:#c00}\n"
"#tip{position:fixed;display:none;pointer-events:none;background:#ffffe8;border:1px solid #888;"
"padding:4px 6px;font:12px monospace;white-space:pre;z-index:9;max-width:60em;overflow:hidden}\n"
"</style></head><body>\n";

/* The script of the page: the data in the variables written before it */
static const char PAGE_JS[] =
"(function(){\n"
"'use strict';\n"
"var H=16,fg=document.getElementById('fg'),st=document.getElementById('status'),\n"
" lo=document.getElementById('leftout'),tip=document.getElementById('tip'),\n"
" sb=document.getElementById('search'),ic=document.getElementById('icase'),\n"
" mt=document.getElementById('matched');\n"
"var CLS=['program','library','anon','raw','nostack','other'];\n"
/* the tree from the flat arrays: preorder, 3 numbers a frame */
"var nodes=[],maxd=0;\n"
"(function(){var stack=[],i,k=0;\n"
" for(i=0;i<T.length;i+=3){var n={fi:T[i],v:T[i+1],left:T[i+2],kids:[],depth:0,parent:null,\n"
"  lmin:L[2*k],lspan:L[2*k+1],inl:0,pn:0,pw:0,size:1};\n"
"  if(k===0){n.name='all';n.cls='root';n.path='all';}\n"
"  else{var p=stack[stack.length-1];n.parent=p;n.depth=p.depth+1;p.kids.push(n);p.left--;\n"
"   n.name=N[n.fi];n.cls=CLS[NC[n.fi]];n.path=p.path+';'+n.name;}\n"
"  if(n.depth>maxd)maxd=n.depth;nodes.push(n);k++;\n"
"  while(stack.length&&stack[stack.length-1].left===0)stack.pop();\n"
"  if(n.left>0)stack.push(n);}\n"
" for(i=0;i<I.length;i+=2)nodes[I[i]].inl=I[i+1];\n"
" for(i=0;i<P.length;i+=3){nodes[P[i]].pn=P[i+1];nodes[P[i]].pw=P[i+2];}\n"
" for(i=nodes.length-1;i>0;i--){var m=nodes[i];m.size+=m.pn;m.parent.size+=m.size;}\n"
" nodes[0].size+=nodes[0].pn;})();\n"
"var root=nodes[0],zoomed=root,re=null;\n"
"function obj(n){return n.depth>1&&NO[n.fi]?O[NO[n.fi]-1]:'';}\n"
"function base(s){return s.slice(s.lastIndexOf('/')+1);}\n"
"function hash(s){var h=2166136261;for(var i=0;i<s.length;i++){h^=s.charCodeAt(i);h=Math.imul(h,16777619)>>>0;}return h;}\n"
"var FIXED={raw:'#b0b0b0',anon:'#6cc3d5',nostack:'#c39bd3',other:'#dcdcdc',root:'#e8e8e8'};\n"
"function hue(o){return hash(base(o))%360;}\n"
/* each object file its hue, each function a shade of it */
"function colour(n){var o=obj(n),h=hash(n.name);\n"
" if(!o||(n.cls!=='program'&&n.cls!=='library'))return FIXED[n.cls]||FIXED.other;\n"
" return 'hsl('+hue(o)+','+(55+h%25)+'%,'+(58+(h>>>8)%14)+'%)';}\n"
"function pct(v,of){return of?(100*v/of).toFixed(2):'0.00';}\n"
"function evs(v){return OFFCPU?(v/1e6).toFixed(3)+' ms off-CPU':v+' event'+(v==1?'':'s');}\n"
"function label(n){return n.name+' ('+evs(n.v)+', '+pct(n.v,root.v)+'%)';}\n"
"function where(n){var s=n.depth>1&&NS[n.fi]?S[NS[n.fi]-1]:'';if(!s)return '';\n"
" return s+(n.lmin?':'+n.lmin+(n.lspan?'-'+(n.lmin+n.lspan):''):'');}\n"
"function tiptext(n){var t=label(n),o=obj(n),w=where(n);\n"
" if(o)t+='\\nobject: '+o;if(w)t+='\\nsource: '+w;\n"
" if(n.inl)t+='\\ninlined'+(n.inl===2?' (in some of its events)':'');return t;}\n"
"function hit(n){if(!re)return false;re.lastIndex=0;return re.test(n.name);}\n"
"var drawn=[];\n"
"function frame(frag,n,x,w,above){var e=document.createElement('div');\n"
" e.className='f'+(above?' above':'')+(w>=3?' sep':'')+(n.inl?' inl':'')+(hit(n)?' match':'');\n"
" e.style.cssText='left:'+x+'px;width:'+w+'px;top:'+((maxd-n.depth)*H)+'px;background-color:'+colour(n);\n"
" e.dataset.path=n.path;e.dataset.name=n.name;e.dataset.count=n.v;e.dataset.class=n.cls;\n"
" e.dataset.obj=obj(n);if(n.inl)e.dataset.inlined=n.inl;\n"
" if(w>=30)e.textContent=n.name;e.fgnode=n;frag.appendChild(e);drawn.push(e);}\n"
"var leftN,leftW;\n"
/* a frame under MIN_WIDTH px is left out with all its callees */
"function draw(frag,n,x,scale){var w=n.v*scale;\n"
" if(w<MINW){leftN+=n.size;leftW+=n.v;return;}\n"
" frame(frag,n,x,w,false);leftN+=n.pn;leftW+=n.pw;\n"
" var cx=x;for(var i=0;i<n.kids.length;i++){draw(frag,n.kids[i],cx,scale);cx+=n.kids[i].v*scale;}}\n"
"function render(){var t0=performance.now();fg.textContent='';drawn=[];\n"
" fg.style.height=((maxd+1)*H)+'px';var W=fg.clientWidth,frag=document.createDocumentFragment();\n"
" for(var a=zoomed.parent;a;a=a.parent)frame(frag,a,0,W,true);\n"
" leftN=0;leftW=0;if(zoomed.v)draw(frag,zoomed,0,W/zoomed.v);fg.appendChild(frag);\n"
" lo.textContent='left out: '+leftN+' frame'+(leftN==1?'':'s')+' (narrower than '+MINW+' px'+\n"
"  (KEEP>1?', or in '+(OFFCPU?'less':'fewer')+' than '+evs(KEEP)+': not in the file':'')+'), holding '+\n"
"  (OFFCPU?evs(leftW):leftW)+' of the '+evs(zoomed.v)+' in view ('+pct(leftW,zoomed.v)+'%)';\n"
" document.getElementById('zoom').textContent=zoomed===root?'':'zoomed to '+label(zoomed);\n"
" document.body.dataset.frames=drawn.length;document.body.dataset.drawMs=(performance.now()-t0).toFixed(1);}\n"
"function zoom(n){zoomed=n;render();}\n"
"window.ustackZoom=zoom;window.ustackRoot=root;\n"
"fg.addEventListener('click',function(ev){var n=ev.target.fgnode;if(n)zoom(n);});\n"
"fg.addEventListener('mousemove',function(ev){var n=ev.target.fgnode;\n"
" if(!n){tip.style.display='none';st.textContent='';return;}\n"
" st.textContent=label(n);tip.textContent=tiptext(n);tip.style.display='block';\n"
" var x=ev.clientX+12,y=ev.clientY+14;if(x+tip.offsetWidth>innerWidth)x=Math.max(0,ev.clientX-tip.offsetWidth-8);\n"
" tip.style.left=x+'px';tip.style.top=y+'px';});\n"
"fg.addEventListener('mouseleave',function(){st.textContent='';tip.style.display='none';});\n"
"document.getElementById('reset').addEventListener('click',function(){zoom(root);});\n"
/* a bad regex says so and highlights nothing; never throws */
"function search(){var term=sb.value;re=null;mt.className='';mt.textContent='';\n"
" if(term!==''){try{re=new RegExp(term,ic.checked?'i':'');}catch(err){mt.className='bad';\n"
"  mt.textContent='bad regex: '+err.message;}}\n"
" if(re){var m=0;(function walk(n){if(n!==root&&hit(n)){m+=n.v;return;}n.kids.forEach(walk);})(root);\n"
"  mt.textContent='matched: '+evs(m)+', '+pct(m,root.v)+'%';}\n"
" fg.classList.toggle('searching',!!re);render();}\n"
"sb.addEventListener('input',search);ic.addEventListener('change',search);\n"
"document.getElementById('clear').addEventListener('click',function(){sb.value='';search();});\n"
"window.addEventListener('resize',render);\n"
/* the legend: the object files, heaviest first, then the fixed colours */
"(function(){var w={},lg=document.getElementById('legend'),list=[];\n"
" nodes.forEach(function(n){var o=obj(n);if(o&&n.parent&&obj(n.parent)!==o)w[o]=(w[o]||0)+n.v;});\n"
" for(var o in w)list.push(o);list.sort(function(a,b){return w[b]-w[a]||(a<b?-1:1);});\n"
" function key(c,text,cls){var s=document.createElement('span'),k=document.createElement('span');\n"
"  k.className='key'+(cls?' '+cls:'');k.style.backgroundColor=c;s.appendChild(k);\n"
"  s.appendChild(document.createTextNode(text));lg.appendChild(s);}\n"
" list.slice(0,12).forEach(function(o){key('hsl('+hue(o)+',65%,62%)',base(o));});\n"
" if(list.length>12)lg.appendChild(document.createTextNode('and '+(list.length-12)+' more objects '));\n"
" key(FIXED.raw,'not symbolised');key(FIXED.anon,'vdso / anonymous');key(FIXED.nostack,'[no user stack]');\n"
" key(FIXED.other,'comm, [cut]');key('#aaa','inlined','inl');})();\n"
"document.title=TITLE;document.getElementById('title').textContent=TITLE;render();\n"
"})();\n";

static void put_strings(FILE *out, const char *var, const char **s, size_t n)
{
	size_t i;

	fprintf(out, "var %s=[", var);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		text_js(out, s[i]);
	}
	fputs("];\n", out);
}

/* The index + 1 of string s in list (added if new), 0 for NULL */
static uint32_t list_index(GHashTable *idx, GPtrArray *list, const char *s)
{
	gpointer p;

	if (!s)
		return 0;
	p = g_hash_table_lookup(idx, s);
	if (!p) {
		g_ptr_array_add(list, (gpointer)s);
		p = GUINT_TO_POINTER(list->len);
		g_hash_table_insert(idx, (gpointer)s, p);
	}
	return GPOINTER_TO_UINT(p);
}

static void write_page(FILE *out, const struct views *v, struct emit *e, unsigned long keep)
{
	size_t nf = v->funcs_t.n, i;
	GHashTable *oidx = g_hash_table_new(g_str_hash, g_str_equal);
	GHashTable *sidx = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *objs = g_ptr_array_new(), *srcs = g_ptr_array_new();
	const char **names = xcalloc(e->nused + 1, sizeof(*names));

	fputs(PAGE_HEAD, out);
	fputs("<div id=\"bar\"><b id=\"title\"></b>\n"
	      "<button id=\"reset\" type=\"button\">Reset zoom</button>\n"
	      "<label>Search (regex) <input id=\"search\" type=\"search\" size=\"24\"></label>"
	      "<label><input id=\"icase\" type=\"checkbox\" checked>ignore case</label>"
	      "<button id=\"clear\" type=\"button\">Clear</button>\n"
	      "<span id=\"matched\"></span><span id=\"zoom\"></span></div>\n"
	      "<div id=\"legend\"></div>\n<div id=\"fg\"></div>\n<div id=\"leftout\"></div>\n"
	      "<div id=\"status\"></div><div id=\"tip\"></div>\n<script>\n", out);
	for (i = 0; i < e->nused; i++)
		names[i] = e->names[e->used[i]];
	put_strings(out, "N", names, e->nused);
	/* per name: its class, object file and source file (index + 1; 0: none) */
	fputs("var NC=[", out);
	for (i = 0; i < e->nused; i++)
		fprintf(out, "%s%d", i ? "," : "", e->used[i] < nf ? (int)v->funcs[e->used[i]].cls : (int)VC_OTHER);
	fputs("];\nvar NO=[", out);
	for (i = 0; i < e->nused; i++)
		fprintf(out, "%s%u", i ? "," : "",
			e->used[i] < nf ? list_index(oidx, objs, v->funcs[e->used[i]].file) : 0);
	fputs("];\nvar NS=[", out);
	for (i = 0; i < e->nused; i++)
		fprintf(out, "%s%u", i ? "," : "",
			e->used[i] < nf ? list_index(sidx, srcs, v->funcs[e->used[i]].src) : 0);
	fputs("];\n", out);
	put_strings(out, "O", (const char **)objs->pdata, objs->len);
	put_strings(out, "S", (const char **)srcs->pdata, srcs->len);
	fprintf(out, "var TITLE=\"ustack: %lu %s\",MINW=%g,KEEP=%lu,OFFCPU=%s;\n", v->total, v->what,
		MIN_WIDTH, keep, v->off_cpu ? "true" : "false");
	fprintf(out, "var T=[%s];\nvar L=[%s];\nvar I=[%s];\nvar P=[%s];\n",
		e->tree->str, e->lines->str, e->inl->str, e->pruned->str);
	fputs(PAGE_JS, out);
	fputs("</script>\n</body></html>\n", out);
	free(names);
	g_ptr_array_free(objs, TRUE);
	g_ptr_array_free(srcs, TRUE);
	g_hash_table_destroy(oidx);
	g_hash_table_destroy(sidx);
}

int flame_write(const struct views *v, const char *path)
{
	size_t nf = v->funcs_t.n, ns = v->strs_t.n, i, max_nodes = MAX_NODES;
	const char *env = getenv("USTACK_FLAME_MAX_NODES");
	struct walk w = { .v = v };
	struct emit e = { 0 };
	struct output *file;
	unsigned long keep;
	int ret = -1;

	if (env)
		max_nodes = strtoul(env, NULL, 10);
	/* names: the functions, then the strings (comms) */
	e.names = xcalloc(nf + ns + 1, sizeof(*e.names));
	for (i = 0; i < nf; i++)
		e.names[i] = v->funcs[i].name;
	for (i = 0; i < ns; i++)
		e.names[nf + i] = v->strs[i];

	w.order = xmalloc((v->stacks_t.n + 1) * sizeof(*w.order));
	for (i = 0; i < v->stacks_t.n; i++)
		w.order[i] = (uint32_t)i;
	qsort_r(w.order, v->stacks_t.n, sizeof(*w.order), cmp_stack, &w);
	w.small = xcalloc(SMALL_COUNTS, sizeof(*w.small));
	w.large = g_array_new(FALSE, FALSE, sizeof(unsigned long));
	walk(&w, false);
	keep = keep_threshold(&w, max_nodes);
	free(w.small);
	g_array_free(w.large, TRUE);
	w.keep = keep;
	walk(&w, true);

	e.v = v;
	e.t = w.t;
	e.remap = xcalloc(nf + ns + 1, sizeof(*e.remap));
	e.used = xmalloc((nf + ns + 1) * sizeof(*e.used));
	e.tree = g_string_new(NULL);
	e.lines = g_string_new(NULL);
	e.inl = g_string_new(NULL);
	e.pruned = g_string_new(NULL);
	emit_node(&e, 0);

	file = output_open(path);
	if (!file)
		goto done;
	write_page(output_stream(file), v, &e, keep);
	if (!output_commit(file))
		ret = 0;
done:
	g_string_free(e.tree, TRUE);
	g_string_free(e.lines, TRUE);
	g_string_free(e.inl, TRUE);
	g_string_free(e.pruned, TRUE);
	free(e.remap);
	free(e.used);
	free(e.names);
	free(w.order);
	free(w.seq);
	free(w.seq2);
	free(w.path);
	free(w.t);
	return ret;
}
