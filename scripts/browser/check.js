// Opens shingle's HTML reports in Debian's headless Chromium (driven through
// the DevTools protocol by playwright-core; no browser is downloaded) and
// checks what a reader gets: no console error, no uncaught exception, no
// dialog (a hostile document's script never runs), no request leaving the
// page (everything is inline), plots drawn, no horizontal scrolling at phone
// width, the print style, the tables' sorting and filtering, and the same
// content with JavaScript off. Writes a desktop and a phone screenshot of
// each page.
//
//   node scripts/browser/check.js --shots DIR [--docs DIR] PAGE.html...
//
// --docs DIR also writes DIR/<page name>.png, a small screenshot of the top of
// each page for the documentation. Prints one line per check and ends with
// "N passed, N failed"; exits 1 if any failed.
'use strict';
const path = require('path');
const fs = require('fs');
const { chromium } = require('playwright-core');

const args = process.argv.slice(2);
let shots = null, docs = null;
const pages = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--shots') shots = args[++i];
  else if (args[i] === '--docs') docs = args[++i];
  else pages.push(args[i]);
}
if (!shots || pages.length === 0) {
  console.error('usage: node scripts/browser/check.js --shots DIR [--docs DIR] PAGE.html...');
  process.exit(2);
}

let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok - ${name}`); }
  else { failed++; console.log(`not ok - ${name}${detail ? ': ' + detail : ''}`); }
}

// The processes of the browser this run started, found by a switch only it
// carries (Chromium ignores switches it does not know).
const marker = `--shingle-browser-check=${process.pid}-${Date.now()}`;
function ours() {
  const pids = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try { if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) pids.push(Number(d)); } catch (e) { /* gone */ }
  }
  return pids;
}
function killOurs() { for (const pid of ours()) { try { process.kill(pid, 'SIGKILL'); } catch (e) { /* gone */ } } }

// Watch a page: console errors, uncaught exceptions, dialogs and requests.
function watch(page, url) {
  const seen = { errors: [], dialogs: [], requests: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(m.text()); });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  page.on('dialog', (d) => { seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('request', (r) => { if (r.url() !== url && !r.url().startsWith('data:')) seen.requests.push(r.url()); });
  return seen;
}

// In the page: a click on a numeric column's header (else the first) sorts
// the rows up, a second click down.
function sortBothWays() {
  const t = document.querySelector('table.sortable');
  const ths = Array.from(t.querySelectorAll('thead th'));
  let i = ths.findIndex((th) => th.classList.contains('num'));
  if (i < 0) i = 0;
  const key = (td) => (td.hasAttribute('data-v') ? parseFloat(td.getAttribute('data-v')) : td.textContent.trim().toLowerCase());
  const keys = () => Array.from(t.tBodies[0].rows).map((r) => key(r.cells[i]));
  ths[i].click();
  const up = keys();
  ths[i].click();
  const down = keys();
  let ordered = true;
  for (let k = 1; k < up.length; k++) if (up[k - 1] > up[k]) ordered = false;
  for (let k = 1; k < down.length; k++) if (down[k - 1] < down[k]) ordered = false;
  return { ordered, sort: ths[i].getAttribute('aria-sort'), rows: up.length };
}

function rowsHidden(all) {
  const t = document.querySelector('table.filterable');
  return Array.from(t.tBodies[0].rows).every((r) => r.hidden === all);
}

// For the documentation: the page as it opens, from the section with its
// first plots, 1000 x 1250 pixels.
const docSection = { cluster: '#sizes', collections: '#table2', index: '#sweeps' };
async function docShot(browser, name, url) {
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 1250 }, offline: true });
  const page = await ctx.newPage();
  await page.goto(url, { waitUntil: 'load' });
  const box = await page.locator(docSection[name] || 'main').first().boundingBox();
  await page.screenshot({ path: path.join(docs, `${name}.png`), fullPage: true,
    clip: { x: 0, y: Math.max(0, Math.floor(box.y) - 10), width: 1000, height: 1250 } });
  await ctx.close();
}

async function checkPage(browser, file) {
  const name = path.basename(file, '.html');
  const url = 'file://' + path.resolve(file);
  if (docs) await docShot(browser, name, url);

  // desktop, JavaScript on
  const desk = await browser.newContext({ viewport: { width: 1200, height: 900 }, offline: true });
  const page = await desk.newPage();
  const seen = watch(page, url);
  await page.goto(url, { waitUntil: 'load' });
  const info = await page.evaluate(() => ({
    sections: document.querySelectorAll('main section').length,
    svgs: Array.from(document.querySelectorAll('svg.plot')).map((s) => {
      const r = s.getBoundingClientRect();
      return [Math.round(r.width), Math.round(r.height)];
    }),
  }));
  check(`${name}: has sections`, info.sections >= 3, `${info.sections} sections`);
  check(`${name}: every plot is drawn`, info.svgs.length > 0 && info.svgs.every(([w, h]) => w > 100 && h > 100),
    JSON.stringify(info.svgs));
  if (await page.$('table.sortable')) {
    const r = await page.evaluate(sortBothWays);
    check(`${name}: a click on a header sorts the table both ways`, r.ordered && r.sort === 'descending', JSON.stringify(r));
  }
  const box = await page.$('input.filter');
  if (box) {
    await box.fill('no row holds this text 7f3a');
    const hidden = await page.evaluate(rowsHidden, true);
    await box.fill('');
    const shown = await page.evaluate(rowsHidden, false);
    check(`${name}: the filter box hides and shows rows`, hidden && shown);
  }
  // print: no navigation, and nothing wider than an A4 page (794 CSS pixels)
  await page.emulateMedia({ media: 'print' });
  await page.setViewportSize({ width: 794, height: 1123 });
  const printed = await page.evaluate(() => ({
    nav: getComputedStyle(document.querySelector('nav.toc')).display,
    width: document.documentElement.scrollWidth,
  }));
  check(`${name}: the print style leaves out the navigation`, printed.nav === 'none');
  check(`${name}: printed, it fits the width of an A4 page`, printed.width <= 795, `${printed.width} px`);
  await page.emulateMedia({ media: 'screen' });
  await page.setViewportSize({ width: 1200, height: 900 });
  await page.screenshot({ path: path.join(shots, `${name}-desktop.png`), fullPage: true });
  check(`${name}: no console error or uncaught exception`, seen.errors.length === 0, seen.errors.join(' | '));
  check(`${name}: no script of a document ran (no dialog)`, seen.dialogs.length === 0, seen.dialogs.join(' | '));
  check(`${name}: nothing is fetched`, seen.requests.length === 0, seen.requests.join(' '));
  await desk.close();

  // phone width: no horizontal scrolling of the page (wide tables scroll in their own box)
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, offline: true });
  const pp = await phone.newPage();
  const pseen = watch(pp, url);
  await pp.goto(url, { waitUntil: 'load' });
  const over = await pp.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  check(`${name}: fits a phone-width screen`, over[0] <= over[1] + 1, `page ${over[0]} px wide in ${over[1]} px`);
  await pp.screenshot({ path: path.join(shots, `${name}-phone.png`), fullPage: true });
  check(`${name}: no console error at phone width`, pseen.errors.length === 0 && pseen.dialogs.length === 0,
    pseen.errors.concat(pseen.dialogs).join(' | '));
  await phone.close();

  // JavaScript off: the same sections and plots are there
  const nojs = await browser.newContext({ viewport: { width: 1200, height: 900 }, javaScriptEnabled: false, offline: true });
  const np = await nojs.newPage();
  await np.goto(url, { waitUntil: 'load' });
  const ns = await np.locator('main section').count();
  const nsvg = await np.locator('svg.plot').count();
  check(`${name}: reads the same without JavaScript`, ns === info.sections && nsvg === info.svgs.length,
    `${ns} sections, ${nsvg} plots`);
  await nojs.close();
}

async function main() {
  fs.mkdirSync(shots, { recursive: true });
  if (docs) fs.mkdirSync(docs, { recursive: true });
  const timer = setTimeout(() => { console.log('not ok - timed out after 300 s'); killOurs(); process.exit(1); }, 300000);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    chromiumSandbox: false,
    args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', marker],
    timeout: 60000,
  });
  try {
    for (const file of pages) {
      try { await checkPage(browser, file); } catch (e) { check(`${path.basename(file)}: opens and runs the checks`, false, String(e)); }
    }
  } finally {
    await browser.close();
    clearTimeout(timer);
  }
  let left = ours();
  for (let i = 0; i < 50 && left.length > 0; i++) { await new Promise((r) => setTimeout(r, 100)); left = ours(); }
  check('no chromium process is left running', left.length === 0, `pids ${left.join(' ')}`);
  if (left.length > 0) killOurs();
}

main().then(() => {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}, (e) => {
  killOurs();
  console.log(`not ok - the browser check could not run: ${e}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
