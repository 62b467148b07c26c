// The HTML report in a real browser (Debian's chromium via playwright-core), opened from disk:
// no errors, no network, every lane of every run, the first terminating endpoint and the exit
// code with their values, tooltips with and without scripts, dark mode, print.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { conditionsText } from '../../src/report/summary.js';
import { launchChromium } from '../helpers/browser.js';
import { loadReportInput } from '../helpers/report-input.js';

const artifacts = new URL('../../../test-artifacts/', import.meta.url);

/** The little of the browser's globals the page callbacks use: tests compile without the DOM lib. */
interface Window {
  getComputedStyle(el: unknown): Record<'backgroundColor' | 'display' | 'breakBefore', string> & {
    getPropertyValue(property: string): string;
  };
  document: { body: unknown };
}

/** WCAG contrast ratio of two CSS rgb() colours. */
function contrast(a: string, b: string): number {
  const luminance = (css: string) => {
    const [r, g, bl] = (css.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

const colours = (page: Page, selector: string, property: 'color' | 'fill') =>
  page.$eval(
    selector,
    (el, prop) => {
      // Runs in the page: only globalThis (the window) is there.
      const w = globalThis as unknown as Window;
      const bg = w.getComputedStyle(w.document.body).backgroundColor;
      return { fg: w.getComputedStyle(el).getPropertyValue(prop), bg };
    },
    property,
  );

test('the HTML report in chromium, from a file', { timeout: 120_000 }, async (t) => {
  const docs = await loadReportInput();
  mkdirSync(artifacts, { recursive: true });
  const file = new URL('report.html', artifacts);
  writeFileSync(
    file,
    renderHtmlReport(docs, { title: 'draincheck lab', generatedAt: new Date().toISOString() }),
  );

  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(file.href, { waitUntil: 'load' });

  await t.test('no console errors, no request but the file itself', () => {
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, [file.href]);
  });

  await t.test('every lane of every run is drawn', async () => {
    for (let i = 1; i <= docs.length; i++) {
      const overview = page.locator(`#run-${i} figure:not(.close-up) svg`);
      const elements = await overview.locator('[data-lane]').all();
      const lanes = await Promise.all(elements.map((e) => e.getAttribute('data-lane')));
      assert.deepEqual(lanes, ['runner', 'client', 'server', 'endpoint', 'pod'], `run ${i}`);
      for (const lane of lanes)
        assert.ok(await overview.locator(`[data-lane="${lane}"]`).isVisible(), `${lane} visible`);
      // `false` is told by its hatching, not by colour alone.
      const falseFill = await overview
        .locator('[data-lane="endpoint"] .band.s-false rect')
        .first()
        .evaluate((el) => (globalThis as unknown as Window).getComputedStyle(el).getPropertyValue('fill'));
      assert.match(falseFill, new RegExp(`url\\("?#r${i}-hatch"?\\)`));
      const readyFill = await overview
        .locator('[data-lane="endpoint"] .band.ready.s-true rect')
        .first()
        .evaluate((el) => (globalThis as unknown as Window).getComputedStyle(el).getPropertyValue('fill'));
      assert.equal(readyFill, 'rgb(26, 127, 55)', 'ready=true keeps its colour');
    }
  });

  await t.test('the first terminating endpoint and the exit code show their values', async () => {
    for (const [index, doc] of docs.entries()) {
      const run = page.locator(`#run-${index + 1} figure:not(.close-up)`);
      const fte = doc.firstTerminatingEndpoint;
      assert.ok(fte.observed && fte.conditions && fte.eventId, 'the lab run observed it');
      const expected = `first terminating: ${conditionsText(fte.conditions)}`;
      const guide = run.locator('[data-first-terminating]');
      assert.equal(await guide.getAttribute('data-first-terminating'), expected);
      assert.ok(await guide.isVisible());
      const mark = page.locator(`#r${index + 1}-${fte.eventId} text`);
      // An evidence mark carries its event id in front of the label.
      const prefix = doc.verdict.evidence.includes(fte.eventId) ? `${fte.eventId} · ` : '';
      assert.equal(await mark.textContent(), `${prefix}${expected}`);
      assert.ok(await mark.isVisible(), 'the mark is labelled with the conditions');
      const exit = run.locator('[data-exit-code]');
      assert.equal(await exit.getAttribute('data-exit-code'), String(doc.exit.code));
      assert.match(
        (await exit.textContent()) ?? '',
        new RegExp(`^exit ${doc.exit.code} ${doc.exit.reason} · `),
      );
      assert.ok(await exit.isVisible());
    }
  });

  await t.test('hovering a mark shows its raw event; a close-up mark shows the same data', async () => {
    // The drain run's completion stands alone in time (marks within a few ms of each other
    // overlap on the overview; the close-up is there for them).
    const index = docs.findIndex((d) => d.scenario.name === 'drain');
    const doc = docs[index]!;
    const r = `r${index + 1}`;
    const event = doc.events.find((e) => e.source === 'client' && e.type === 'work-outcome')!;
    await page.locator(`#${r}-${event.id} > circle:not(.ring)`).hover();
    const tip = page.locator('#tip');
    await tip.waitFor({ state: 'visible' });
    assert.match(
      (await tip.locator('.tip-head').textContent()) ?? '',
      new RegExp(`^${event.id} · .* · client · work-outcome$`),
    );
    assert.deepEqual(JSON.parse((await tip.locator('pre').textContent()) ?? ''), event.data);
    await page.mouse.move(2, 2);
    await tip.waitFor({ state: 'hidden' });
    await page.locator(`[data-raw="${r}-${event.id}"] > circle:not(.ring)`).hover();
    await tip.waitFor({ state: 'visible' });
    assert.deepEqual(JSON.parse((await tip.locator('pre').textContent()) ?? ''), event.data);
    await page.mouse.move(2, 2);
  });

  await t.test('light mode screenshot', async () => {
    await page.screenshot({ path: new URL('report.png', artifacts).pathname, fullPage: true });
  });

  await t.test('dark mode: text stays readable on its background', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    const body = await colours(page, 'body', 'color');
    assert.notEqual(body.fg, body.bg);
    assert.ok(contrast(body.fg, body.bg) >= 7, `body ${body.fg} on ${body.bg}`);
    assert.ok(contrast('rgb(0, 0, 0)', body.bg) < 2, `the background is dark: ${body.bg}`);
    for (const selector of ['.lane-name', '.row-name', '.mark text', 'td', 'figcaption']) {
      const c = await colours(page, selector, selector.startsWith('.') ? 'fill' : 'color');
      assert.ok(contrast(c.fg, c.bg) >= 4.5, `${selector}: ${c.fg} on ${c.bg}`);
    }
    await page.screenshot({ path: new URL('report-dark.png', artifacts).pathname, fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await t.test('print: light, no tooltip, one run per page, a PDF comes out', async () => {
    await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
    const body = await colours(page, 'body', 'color');
    assert.equal(body.bg, 'rgb(255, 255, 255)', 'paper is white even in dark mode');
    assert.equal(
      await page.$eval('#tip', (el) => (globalThis as unknown as Window).getComputedStyle(el).display),
      'none',
    );
    assert.equal(
      await page.$eval('#run-2', (el) => (globalThis as unknown as Window).getComputedStyle(el).breakBefore),
      'page',
    );
    const pdf = await page.pdf({ format: 'A4', landscape: true, printBackground: true });
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    await page.emulateMedia({ media: 'screen', colorScheme: 'light' });
  });

  await t.test('without JavaScript every mark still has its raw event as an SVG <title>', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    t.after(() => context.close());
    const plain = await context.newPage();
    await plain.goto(file.href, { waitUntil: 'load' });
    const doc = docs[0]!;
    const event = doc.events.find((e) => e.source === 'server' && e.type === 'request-accepted')!;
    const title = (await plain.locator(`#r1-${event.id} > title`).textContent()) ?? '';
    assert.ok(title.startsWith(`${event.id} · `), title);
    assert.deepEqual(JSON.parse(title.slice(title.indexOf('\n') + 1)), event.data);
    const untitled = await plain.locator('svg[role="img"] .mark:not(:has(> title))').count();
    assert.equal(untitled, 0, 'every mark has a <title>');
  });

  assert.deepEqual(problems, [], 'no console errors along the way');
});
