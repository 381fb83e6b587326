// SPDX-License-Identifier: GPL-2.0
// How long headless Chromium takes to load and draw a flame graph: from
// the navigation to the second animation frame after "load" (the page
// painted).  Prints "MS FRAMES" (the number of frame elements), then the
// page's "left out" line if it has one.  For make bench; tests nothing.
// Usage: node flame-draw.js PUPPETEER_DIR CHROMIUM FILE.html [SCREENSHOT.png]
'use strict';
const path = require('path');
const [dir, chromium, html, shot] = process.argv.slice(2);
const puppeteer = require(path.join(dir, 'node_modules', 'puppeteer-core'));

(async () => {
	const browser = await puppeteer.launch({
		executablePath: chromium, headless: true, protocolTimeout: 600000,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
	try {
		const page = await browser.newPage();
		await page.setViewport({ width: 1200, height: 700 });
		const t0 = Date.now();
		await page.goto('file://' + path.resolve(html), { waitUntil: 'load', timeout: 600000 });
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
		const ms = Date.now() - t0;
		const n = await page.$$eval('#fg .f', (els) => els.length);
		const left = await page.$eval('#leftout', (e) => e.textContent).catch(() => '');
		console.log(`${ms} ${n}`);
		console.log(left);
		if (shot)
			await page.screenshot({ path: shot, fullPage: true });
	} finally {
		await browser.close();
	}
})();
