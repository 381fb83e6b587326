// SPDX-License-Identifier: GPL-2.0
// ustack's flame graphs in headless Chromium, through puppeteer-core,
// measured as drawn: each frame's getBoundingClientRect, and the element
// the browser finds at its centre.
//  - the 12 events of views/basic.trace.in: widths, zoom, reset, search,
//    hover, colours; its counts are given here by hand (see views-tests);
//  - graphs of many events (gen-skewed): the truth is the tree of
//    "ustack report --folded", never read back from the page: every frame
//    at least MINW px wide is drawn, count/total of the width (to 1 px),
//    no other; the frames left out and their events are stated and true;
//    a click zooms, a regex search highlights exactly the frames matching;
//  - a graph with inlined calls: they are marked, and the tooltip says so.
// Usage: node flame-test.js PUPPETEER_DIR CHROMIUM CONFIG.json
// One line per test: PASS name / FAIL name -- why.
'use strict';
const fs = require('fs');
const path = require('path');
const [dir, chromium, configPath] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const puppeteer = require(path.join(dir, 'node_modules', 'puppeteer-core'));

// The page's rule, as documented in flame.c: frames under MINW px are not
// drawn; the file holds (at least) the frames of MAXW * count / total >= MINW
const MINW = 0.1, MAXW = 4096;
const TOL = 1;	// pixels

let failed = 0;
function check(name, ok, why) {
	if (ok) {
		console.log(`PASS ${name}`);
	} else {
		console.log(`FAIL ${name} -- ${String(why).slice(0, 600)}`);
		failed = 1;
	}
}

// Every frame drawn: its rectangle, and whether the element at its centre
// (for one at least 2 px wide) is the frame itself
async function frames(page) {
	return page.$$eval('#fg .f', (els) => {
		const fg = document.getElementById('fg').getBoundingClientRect();
		return els.map((e) => {
			const r = e.getBoundingClientRect();
			// a whole pixel: the browser hit-tests the box as painted, snapped
			const at = r.width >= 2 ? document.elementFromPoint(Math.floor(r.left + r.width / 2),
									  Math.floor(r.top + r.height / 2)) : e;
			return {
				path: e.dataset.path, name: e.dataset.name, count: Number(e.dataset.count),
				cls: e.dataset.class, obj: e.dataset.obj, inlined: e.dataset.inlined,
				left: r.left, x: r.left - fg.left, width: r.width, top: r.top, height: r.height,
				bg: getComputedStyle(e).backgroundColor, visible: at === e,
				above: e.classList.contains('above'), match: e.classList.contains('match'),
			};
		});
	});
}

function byPath(list) {
	const m = {};
	for (const f of list)
		m[f.path] = f;
	return m;
}

// --- the truth: the tree of --folded lines "comm;outer;...;inner count"
function foldedTree(text) {
	const root = { name: 'all', path: 'all', count: 0, kids: new Map() };
	for (const line of text.split('\n')) {
		const m = /^(.*) (\d+)$/.exec(line);
		if (!m)
			continue;
		const n = Number(m[2]);
		let node = root;
		root.count += n;
		for (const name of m[1].split(';')) {
			if (!node.kids.has(name))
				node.kids.set(name, { name, path: node.path + ';' + name, count: 0, kids: new Map() });
			node = node.kids.get(name);
			node.count += n;
		}
	}
	(function size(n) {
		n.size = 1;
		for (const k of n.kids.values())
			n.size += size(k);
		return n.size;
	})(root);
	return root;
}

function find(root, p) {
	let node = root;
	for (const name of p.split(';').slice(1)) {
		node = node && node.kids.get(name);
	}
	return node;
}

// What a view zoomed to z must show: the frames drawn, and those left out
// (with their callees) and their events
function expected(root, z, W, keep) {
	const want = new Map();
	let leftN = 0, leftW = 0;
	(function walk(n) {
		const w = n.count * W / z.count;
		if (n.count < keep || w < MINW) {
			leftN += n.size;
			leftW += n.count;
			return;
		}
		want.set(n.path, w);
		for (const k of n.kids.values())
			walk(k);
	})(z);
	return { want, leftN, leftW };
}

function stated(text) {
	const m = /^left out: (\d+) frames? .*holding (\d+) of the (\d+) events? in view/.exec(text);
	return m ? { n: Number(m[1]), w: Number(m[2]), of: Number(m[3]) } : null;
}

// The drawn view, zoomed to z, against the truth
async function checkView(page, label, root, z, keep) {
	const W = await page.$eval('#fg', (e) => e.clientWidth);
	const list = await frames(page);
	const { want, leftN, leftW } = expected(root, z, W, keep);
	const drawn = list.filter((f) => !f.above);
	const bad = [], hidden = [];
	let off = 0;
	for (const f of drawn) {
		const t = find(root, f.path);
		if (!t) {
			bad.push(`${f.path} drawn, not in the trace`);
			continue;
		}
		const w = t.count * W / z.count;
		if (Math.abs(f.width - w) > TOL || f.count !== t.count) {
			off++;
			if (bad.length < 5)
				bad.push(`${f.path}: count ${f.count} width ${f.width.toFixed(2)}, want ${t.count} and ${w.toFixed(2)}`);
		}
		if (!f.visible)
			hidden.push(f.path);
	}
	check(`${label}: each of the ${drawn.length} frames drawn is count/${z.count} of ${W}px wide (to ${TOL}px), with its count`,
	      drawn.length > 0 && off === 0 && bad.length === 0, `${off} off: ${bad.join('; ')}`);
	check(`${label}: every frame 2px wide or more is what the browser finds at its centre`,
	      hidden.length === 0, `${hidden.length} covered: ${hidden.slice(0, 3).join(' ')}`);
	const got = new Set(drawn.map((f) => f.path));
	const missing = [...want.keys()].filter((p) => !got.has(p));
	const extra = [...got].filter((p) => !want.has(p));
	check(`${label}: exactly the ${want.size} frames at least ${MINW}px wide are drawn`,
	      missing.length === 0 && extra.length === 0,
	      `missing ${missing.length} (${missing.slice(0, 3).join(' ')}), extra ${extra.length} (${extra.slice(0, 3).join(' ')})`);
	const text = await page.$eval('#leftout', (e) => e.textContent);
	const s = stated(text);
	check(`${label}: the page says ${leftN} frames left out, holding ${leftW} of ${z.count} events`,
	      s && s.n === leftN && s.w === leftW && s.of === z.count, `it says "${text}"`);
	return { W, list, leftN, leftW };
}

async function load(browser, html) {
	const page = await browser.newPage();
	await page.setViewport({ width: 1200, height: 700 });
	const outside = [], errors = [];
	await page.setRequestInterception(true);
	page.on('request', (req) => {
		if (!req.url().startsWith('file:') && !req.url().startsWith('data:')) {
			outside.push(req.url());
			req.abort();
		} else {
			req.continue();
		}
	});
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto('file://' + path.resolve(html), { waitUntil: 'load', timeout: 120000 });
	return { page, outside, errors };
}

// hue of "rgb(r, g, b)", in degrees
function hue(rgb) {
	const [r, g, b] = rgb.match(/\d+/g).slice(0, 3).map((x) => Number(x) / 255);
	const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
	if (!d)
		return -1;
	let h = max === r ? (g - b) / d : max === g ? 2 + (b - r) / d : 4 + (r - g) / d;
	return ((h * 60) + 360) % 360;
}

async function fixture(browser, c) {
	const { page, outside, errors } = await load(browser, c.html);
	await page.screenshot({ path: c.shot, fullPage: true });
	check('the page loads without a script error, and asks for nothing outside the file',
	      errors.length === 0 && outside.length === 0,
	      `errors ${errors.join('; ')}; requests ${outside.join(' ')}`);

	// The stack all;prog;main;level1;level2;level3;leaf and its neighbours,
	// with their counts of the fixture's 12 events
	const TOTAL = 12, P = 'all;prog;main';
	const COUNTS = {
		'all': 12, 'all;prog': 8, 'all;worker': 4, [P]: 7, [P + ';level1']: 6,
		[P + ';level1;level2']: 5, [P + ';level1;level2;level3']: 3,
		[P + ';level1;level2;level3;leaf']: 3, [P + ';level1;[unknown]']: 1, [P + ';[vdso/anon]']: 1,
		'all;prog;[no user stack]': 1, 'all;worker;main;lib_entry;lib_leaf': 3,
	};
	const CLASSES = {
		[P]: 'program', 'all;worker;main;lib_entry;lib_leaf': 'library', [P + ';[vdso/anon]']: 'anon',
		[P + ';level1;[unknown]']: 'raw', 'all;prog;[no user stack]': 'nostack',
	};
	const W = await page.$eval('#fg', (e) => e.clientWidth);
	let f = byPath(await frames(page));
	let bad = [];
	for (const [p, n] of Object.entries(COUNTS)) {
		const want = W * n / TOTAL;
		if (!f[p])
			bad.push(`${p} not drawn`);
		else if (f[p].count !== n || Math.abs(f[p].width - want) > TOL)
			bad.push(`${p}: count ${f[p].count} width ${f[p].width.toFixed(1)}, want ${n} and ${want.toFixed(1)}`);
	}
	check(`frames of a known stack are drawn ${W}px * count / 12 wide (to ${TOL}px), with their counts`,
	      bad.length === 0, bad.join('; '));
	const lv1 = f[P + ';level1'], lv2 = f[P + ';level1;level2'], unk = f[P + ';level1;[unknown]'];
	check('children sit above their parent, inside its span',
	      lv1 && lv2 && unk && lv2.top < lv1.top && Math.abs(lv2.top - unk.top) < 0.5 &&
	      lv2.left >= lv1.left - TOL && unk.left + unk.width <= lv1.left + lv1.width + TOL,
	      JSON.stringify({ lv1, lv2, unk }));
	const stl = stated(await page.$eval('#leftout', (e) => e.textContent));
	check('nothing is left out of the 12 events: the page says 0 frames, 0 events',
	      stl && stl.n === 0 && stl.w === 0 && stl.of === 12, JSON.stringify(stl));

	bad = [];
	const colours = new Set();
	for (const [p, cl] of Object.entries(CLASSES)) {
		if (!f[p] || f[p].cls !== cl)
			bad.push(`${p}: class ${f[p] && f[p].cls}, want ${cl}`);
		else
			colours.add(f[p].bg);
	}
	check('program, library, vdso/anon, raw and [no user stack] frames have 5 colours',
	      bad.length === 0 && colours.size === 5, bad.join('; ') + ` colours ${[...colours].join(' ')}`);
	// Each object file its hue: prog's frames one, lib.so's another
	const hues = {};
	for (const x of Object.values(f)) {
		if (x.obj && (x.cls === 'program' || x.cls === 'library'))
			(hues[path.basename(x.obj)] ||= new Set()).add(Math.round(hue(x.bg)));
	}
	check('frames are coloured by object file: one hue for prog, another for lib.so',
	      hues.prog && hues['lib.so'] && hues.prog.size === 1 && hues['lib.so'].size === 1 &&
	      [...hues.prog][0] !== [...hues['lib.so']][0], JSON.stringify(hues, (k, v) => v instanceof Set ? [...v] : v));

	// Hover: the status line, and the tooltip with object and source line
	const m = f[P];
	await page.mouse.move(m.left + m.width / 2, m.top + 5);
	const status = await page.$eval('#status', (e) => e.textContent);
	const tip = await page.$eval('#tip', (e) => e.offsetWidth > 0 ? e.textContent : '');
	check('hover shows the name, count and percentage: main (7 events, 58.33%)',
	      status === 'main (7 events, 58.33%)', `status "${status}"`);
	check('the tooltip gives name, count, %, the object file and file:line',
	      tip.startsWith('main (7 events, 58.33%)\n') && tip.includes(`\nobject: ${c.prog}\n`) &&
	      new RegExp(`\nsource: \\S*prog\\.c:${c.mainLine}(\n|$)`).test(tip), `tooltip "${tip}"`);

	await page.mouse.click(lv1.left + lv1.width / 2, lv1.top + 5);
	f = byPath(await frames(page));
	const zoom = {
		[P + ';level1']: 6, [P + ';level1;level2']: 5, [P + ';level1;level2;level3']: 3,
		[P + ';level1;level2;level3;leaf']: 3, [P + ';level1;[unknown]']: 1,
	};
	bad = [];
	for (const [p, n] of Object.entries(zoom)) {
		const want = W * n / 6;
		if (!f[p] || Math.abs(f[p].width - want) > TOL)
			bad.push(`${p}: width ${f[p] && f[p].width.toFixed(1)}, want ${want.toFixed(1)}`);
	}
	check('a click on level1 zooms: it spans the full width, level2 5/6 of it, [unknown] 1/6',
	      bad.length === 0 && Math.abs(f[P + ';level1'].x) < TOL &&
	      Math.abs(f[P + ';level1;[unknown]'].x) < TOL && Math.abs(f[P + ';level1;level2'].x - W / 6) < TOL,
	      bad.join('; '));
	check('zoomed: the frames outside level1 are gone, its callers are drawn across, dimmed',
	      !f['all;worker'] && !f[P + ';[vdso/anon]'] && f[P] && f[P].above &&
	      Math.abs(f[P].width - W) < TOL && f['all'] && f['all'].above, Object.keys(f).join(' '));
	await page.click('#reset');
	f = byPath(await frames(page));
	check('Reset zoom: back to the whole graph',
	      f['all'] && Math.abs(f['all'].width - W) < TOL && f['all;worker'] &&
	      Math.abs(f[P + ';level1'].width - W / 2) < TOL, Object.keys(f).length + ' frames');

	// Search, a regex: level1 and level3 (not level2), 6 events
	await page.type('#search', 'LEVEL[13]$');
	let all = await frames(page);
	const hits = all.filter((x) => x.match).map((x) => x.name).sort();
	const matched = await page.$eval('#matched', (e) => e.textContent);
	check('search "LEVEL[13]$" (ignoring case): level1, level3 highlighted, 6 events (50.00%) matched',
	      JSON.stringify(hits) === JSON.stringify(['level1', 'level3']) &&
	      matched === 'matched: 6 events, 50.00%', `${hits.join(',')}; "${matched}"`);
	await page.click('#icase');
	all = await frames(page);
	check('search with case: "LEVEL[13]$" matches nothing',
	      all.filter((x) => x.match).length === 0, all.filter((x) => x.match).map((x) => x.name).join());
	await page.click('#icase');
	await page.screenshot({ path: c.shot.replace(/\.png$/, '-search.png'), fullPage: true });
	await page.click('#clear');
	const left = (await frames(page)).filter((x) => x.match).length;
	check('clearing the search removes the highlight', left === 0, `${left} still highlighted`);
	await page.close();
}

// A large graph against the tree of its --folded lines
async function large(browser, c) {
	const root = foldedTree(fs.readFileSync(c.folded, 'utf8'));
	const keep = c.pruned ? Math.max(1, Math.floor(root.count * MINW / MAXW)) : 1;
	const label = c.label;
	const { page, outside, errors } = await load(browser, c.html);
	if (c.shot)
		await page.screenshot({ path: c.shot, fullPage: true });
	check(`${label}: the page loads without a script error, and asks for nothing outside the file`,
	      errors.length === 0 && outside.length === 0, `errors ${errors.join('; ')}; requests ${outside.join(' ')}`);
	const v = await checkView(page, label, root, root, keep);
	check(`${label}: frames are left out (the test means something)`, v.leftN > 0, `${v.leftN}`);

	// Zoom: the widest drawn frame that is not all of its parent and has
	// frames above it left out of the whole view
	const cands = v.list.filter((f) => !f.above && f.width >= 20 && f.width < v.W / 2 && f.path.split(';').length >= 3)
		.map((f) => ({ f, t: find(root, f.path) }))
		.filter(({ t }) => t && t.kids.size > 1 && (!c.pruned || [...t.kids.values()].some((k) => k.count < keep && k.count * v.W / t.count >= MINW)))
		.sort((a, b) => b.f.width - a.f.width);
	if (!cands.length) {
		check(`${label}: a frame to zoom to`, false, 'none found');
		await page.close();
		return;
	}
	const { f: z, t: zt } = cands[0];
	await page.mouse.click(z.left + z.width / 2, z.top + z.height / 2);
	const zl = `${label}, zoomed to ${z.name} (${zt.count} events)`;
	const zv = await checkView(page, zl, root, zt, keep);
	const zf = byPath(zv.list);
	check(`${zl}: it spans the whole width, from x 0`,
	      zf[z.path] && Math.abs(zf[z.path].width - zv.W) <= TOL && Math.abs(zf[z.path].x) <= TOL,
	      JSON.stringify(zf[z.path]));
	if (c.pruned) {
		const notInFile = [...zt.kids.values()].filter((k) => k.count < keep);
		check(`${zl}: its callees of fewer than ${keep} events are not in the file, and counted as left out`,
		      notInFile.length > 0 && notInFile.every((k) => !zf[k.path]), notInFile.map((k) => k.path).join(' '));
	}
	await page.click('#reset');

	if (c.regex) {
		await page.type('#search', c.regex);
		const list = await frames(page);
		const re = new RegExp(c.regex, 'i');
		const wrong = list.filter((f) => f.path !== 'all' && f.match !== re.test(f.name));
		let m = 0;
		(function walk(n) {
			if (n !== root && re.test(n.name) && n.count >= keep) {
				m += n.count;
				return;
			}
			for (const k of n.kids.values())
				walk(k);
		})(root);
		const matched = await page.$eval('#matched', (e) => e.textContent);
		const nmatch = list.filter((f) => f.match).length;
		check(`${label}: search "${c.regex}" highlights exactly the ${nmatch} drawn frames whose name matches, ${m} events`,
		      nmatch > 0 && wrong.length === 0 && matched.startsWith(`matched: ${m} events, `),
		      `${wrong.length} wrong (${wrong.slice(0, 3).map((f) => f.name + ':' + f.match).join(' ')}); "${matched}"`);
		if (c.searchShot)
			await page.screenshot({ path: c.searchShot, fullPage: true });
		await page.click('#search', { clickCount: 3 });
		await page.type('#search', 'f1(');
		const bad = await page.$eval('#matched', (e) => e.textContent);
		const still = (await frames(page)).filter((f) => f.match).length;
		check(`${label}: a bad regex "f1(" says so, highlights nothing, throws nothing`,
		      bad.startsWith('bad regex') && still === 0 && errors.length === 0, `"${bad}", ${still} highlighted, ${errors.join('; ')}`);
	}
	await page.close();
}

async function inlined(browser, c) {
	const { page, errors } = await load(browser, c.html);
	const list = await frames(page);
	const names = new Set(c.inlined);
	const wrong = list.filter((f) => f.path !== 'all' && !f.above && (f.inlined === '1') !== names.has(f.name));
	const one = list.find((f) => names.has(f.name));
	let tip = '';
	if (one) {
		await page.mouse.move(one.left + Math.min(one.width / 2, 5), one.top + 5);
		tip = await page.$eval('#tip', (e) => e.textContent);
	}
	check(`the ${c.inlined.length} inlined calls (as report names them) are marked, no other frame, and the tooltip says "inlined"`,
	      errors.length === 0 && names.size > 0 && list.length > 2 && wrong.length === 0 && /\ninlined$/.test(tip),
	      `${wrong.map((f) => f.name).join(', ')} wrong; tip "${tip}"; ${errors.join('; ')}`);
	await page.close();
}

// An off-CPU graph (--off-cpu --wakers): widths are shares of the time
// off the CPU, and the page says it counts time, not events
async function offcpu(browser, c) {
	const root = foldedTree(fs.readFileSync(c.folded, 'utf8'));
	const label = c.label;
	const { page, outside, errors } = await load(browser, c.html);
	await page.screenshot({ path: c.shot, fullPage: true });
	check(`${label}: the page loads without a script error, and asks for nothing outside the file`,
	      errors.length === 0 && outside.length === 0, `errors ${errors.join('; ')}; requests ${outside.join(' ')}`);
	const W = await page.$eval('#fg', (e) => e.clientWidth);
	const drawn = (await frames(page)).filter((f) => !f.above);
	// --folded calls a frame in the vdso or anonymous memory "[unknown]",
	// as it does one that has no symbol: such siblings are one line there,
	// and one of them may be too narrow to draw
	const merged = new Map();
	for (const f of drawn) {
		const p = f.path.split(';').map((n) => (n === '[vdso/anon]' ? '[unknown]' : n)).join(';');
		const m = merged.get(p) || { path: p, count: 0, width: 0, anon: false };
		m.count += f.count;
		m.width += f.width;
		m.anon = m.anon || p !== f.path;
		merged.set(p, m);
	}
	const bad = [];
	for (const f of merged.values()) {
		const t = find(root, f.path);
		const w = t ? t.count * W / root.count : -1;
		const undrawn = t ? t.count - f.count : 0;
		const counted = f.anon ? undrawn >= 0 && undrawn * W / root.count < MINW : undrawn === 0;
		if (!t || Math.abs(f.width - w) > TOL || !counted)
			bad.push(`${f.path}: ${f.count} ns, ${f.width.toFixed(2)}px, want ${t ? t.count : 'none'} and ${w.toFixed(2)}`);
	}
	check(`${label}: each of the ${drawn.length} frames drawn is its share of the ${root.count} ns off the CPU (to ${TOL}px)`,
	      drawn.length > 1 && bad.length === 0, bad.slice(0, 4).join('; '));
	const waker = drawn.filter((f) => f.name === '--').sort((a, b) => b.width - a.width)[0];
	let tip = '';
	if (waker) {
		await page.mouse.move(waker.left + Math.min(waker.width / 2, 5), waker.top + 5);
		tip = await page.$eval('#tip', (e) => e.textContent);
	}
	const title = await page.title();
	check(`${label}: the title counts ns off-CPU, and hovering a waker's "--" says its ms off-CPU`,
	      /ns off-CPU/.test(title) && / ms off-CPU, [0-9.]+%\)/.test(tip), `title "${title}", tip "${tip}"`);
	await page.close();
}

(async () => {
	const browser = await puppeteer.launch({
		executablePath: chromium,
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
	try {
		if (config.fixture)
			await fixture(browser, config.fixture);
		for (const c of config.large || [])
			await large(browser, c);
		if (config.offcpu)
			await offcpu(browser, config.offcpu);
		if (config.inlined)
			await inlined(browser, config.inlined);
	} catch (e) {
		check('the browser test ran to its end', false, String(e && e.stack || e).split('\n').slice(0, 3).join(' '));
	} finally {
		await browser.close();
	}
	process.exit(failed);
})();
