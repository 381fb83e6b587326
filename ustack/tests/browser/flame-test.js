// SPDX-License-Identifier: GPL-2.0
// The flame graph of views/basic.trace.in in headless Chromium, through
// puppeteer-core: frames drawn with widths in proportion to their counts,
// a click zooms, reset, search, hover, colours by file class, and no
// request leaves the file.  The counts are the fixture's, by hand (see
// views-tests): given here, never read back from the page.
// Usage: node flame-test.js PUPPETEER_DIR CHROMIUM FILE.html SCREENSHOT.png
// One line per test: PASS name / FAIL name -- why.
'use strict';
const path = require('path');
const [dir, chromium, html, shot] = process.argv.slice(2);
const puppeteer = require(path.join(dir, 'node_modules', 'puppeteer-core'));

let failed = 0;
function check(name, ok, why) {
	if (ok) {
		console.log(`PASS ${name}`);
	} else {
		console.log(`FAIL ${name} -- ${why}`);
		failed = 1;
	}
}

// The stack all;prog;main;level1;level2;level3;leaf and its neighbours,
// with their counts of the fixture's 12 events
const TOTAL = 12;
const P = 'all;prog;main';
const COUNTS = {
	'all': 12,
	'all;prog': 8,
	'all;worker': 4,
	[P]: 7,
	[P + ';level1']: 6,
	[P + ';level1;level2']: 5,
	[P + ';level1;level2;level3']: 3,
	[P + ';level1;level2;level3;leaf']: 3,
	[P + ';level1;[unknown]']: 1,
	[P + ';[vdso/anon]']: 1,
	'all;prog;[no user stack]': 1,
	'all;worker;main;lib_entry;lib_leaf': 3,
};
const CLASSES = {
	[P]: 'program',
	'all;worker;main;lib_entry;lib_leaf': 'library',
	[P + ';[vdso/anon]']: 'anon',
	[P + ';level1;[unknown]']: 'raw',
	'all;prog;[no user stack]': 'nostack',
};
const TOL = 1.5;	// pixels

async function frames(page) {
	return page.$$eval('#fg .f', (els) => els.map((e) => {
		const r = e.getBoundingClientRect();
		const fg = document.getElementById('fg').getBoundingClientRect();
		return {
			path: e.dataset.path, name: e.dataset.name, count: Number(e.dataset.count),
			cls: e.dataset.class, depth: Number(e.dataset.depth), left: r.left, x: r.left - fg.left,
			width: r.width, top: r.top, bg: getComputedStyle(e).backgroundColor,
			above: e.classList.contains('above'), match: e.classList.contains('match'),
		};
	}));
}

function byPath(list) {
	const m = {};
	for (const f of list)
		m[f.path] = f;
	return m;
}

(async () => {
	const browser = await puppeteer.launch({
		executablePath: chromium,
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
	try {
		const page = await browser.newPage();
		await page.setViewport({ width: 1200, height: 700 });
		const outside = [];
		await page.setRequestInterception(true);
		page.on('request', (req) => {
			if (!req.url().startsWith('file:') && !req.url().startsWith('data:')) {
				outside.push(req.url());
				req.abort();
			} else {
				req.continue();
			}
		});
		const errors = [];
		page.on('pageerror', (e) => errors.push(String(e)));
		await page.goto('file://' + path.resolve(html), { waitUntil: 'load' });
		await page.screenshot({ path: shot, fullPage: true });
		check('the page loads without a script error, and asks for nothing outside the file',
		      errors.length === 0 && outside.length === 0,
		      `errors ${errors.join('; ')}; requests ${outside.join(' ')}`);

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

		// Children lie inside their parent, side by side, one row up
		const lv1 = f[P + ';level1'], lv2 = f[P + ';level1;level2'], unk = f[P + ';level1;[unknown]'];
		check('children sit above their parent, inside its span',
		      lv1 && lv2 && unk && lv2.top < lv1.top && Math.abs(lv2.top - unk.top) < 0.5 &&
		      lv2.left >= lv1.left - TOL && unk.left + unk.width <= lv1.left + lv1.width + TOL,
		      JSON.stringify({ lv1, lv2, unk }));

		bad = [];
		const colours = new Set();
		for (const [p, c] of Object.entries(CLASSES)) {
			if (!f[p] || f[p].cls !== c)
				bad.push(`${p}: class ${f[p] && f[p].cls}, want ${c}`);
			else
				colours.add(f[p].bg);
		}
		check('frames are coloured by file class: program, library, vdso/anon, raw, [no user stack]',
		      bad.length === 0 && colours.size === 5, bad.join('; ') + ` colours ${[...colours].join(' ')}`);

		// Hover: the status line names the frame, its count and %
		const m = f[P];
		await page.mouse.move(m.left + m.width / 2, m.top + 5);
		const status = await page.$eval('#status', (e) => e.textContent);
		const title = await page.$eval(`#fg .f[data-path="${P}"]`, (e) => e.title);
		check('hover shows the name, count and percentage: main (7 events, 58.33%)',
		      status === 'main (7 events, 58.33%)' && title === status, `status "${status}", title "${title}"`);

		// Click level1: it spans the whole width, its children scale with it
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
		      // children by name: "[unknown]" first, then level2 after its 1/6
		      Math.abs(f[P + ';level1;[unknown]'].x) < TOL &&
		      Math.abs(f[P + ';level1;level2'].x - W / 6) < TOL,
		      bad.join('; ') + ` x: level1 ${f[P + ';level1'].x}, level2 ${f[P + ';level1;level2'].x}`);
		check('zoomed: the frames outside level1 are gone, its callers are drawn across, dimmed',
		      !f['all;worker'] && !f[P + ';[vdso/anon]'] && f[P] && f[P].above &&
		      Math.abs(f[P].width - W) < TOL && f['all'] && f['all'].above,
		      Object.keys(f).join(' '));

		await page.click('#reset');
		f = byPath(await frames(page));
		check('Reset zoom: back to the whole graph',
		      f['all'] && Math.abs(f['all'].width - W) < TOL && f['all;worker'] &&
		      Math.abs(f[P + ';level1'].width - W / 2) < TOL, Object.keys(f).length + ' frames');

		// Search: every frame whose name holds "level" is highlighted
		await page.type('#search', 'level');
		const all = await frames(page);
		const hits = all.filter((x) => x.match).map((x) => x.name).sort();
		const matched = await page.$eval('#matched', (e) => e.textContent);
		check('search "level": level1, level2, level3 highlighted, 6 events (50.00%) matched',
		      JSON.stringify(hits) === JSON.stringify(['level1', 'level2', 'level3']) &&
		      matched === 'matched: 6 events, 50.00%', `${hits.join(',')}; "${matched}"`);
		await page.screenshot({ path: shot.replace(/\.png$/, '-search.png'), fullPage: true });
		await page.click('#clear');
		const left = (await frames(page)).filter((x) => x.match).length;
		check('clearing the search removes the highlight', left === 0, `${left} still highlighted`);
	} catch (e) {
		check('the browser test ran to its end', false, String(e && e.stack || e).split('\n')[0]);
	} finally {
		await browser.close();
	}
	process.exit(failed);
})();
