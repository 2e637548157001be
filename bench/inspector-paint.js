// First contentful paint of the inspector page (issue 16: under 300 ms), in Debian's headless chromium
// through playwright-core: `node bench/inspector-paint.js` after `npm run build`. Five page loads
// against one server; the first includes the browser's own warm-up.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
const child = spawn(process.execPath, ['bin/mockapi.js', 'serve', '--port', '0', '--no-state', '--log', 'off'], {
  cwd: new URL('..', import.meta.url),
});
const url = await new Promise((done) =>
  child.stdout.on('data', (d) => {
    const m = /listening on (\S+)/.exec(String(d));
    if (m) done(m[1]);
  }),
);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const results = [];
for (let i = 0; i < 5; i++) {
  const page = await browser.newPage();
  await page.goto(`${url}/__mockapi/`);
  const fcp = await page.evaluate(
    () =>
      new Promise((done) => {
        const e = performance.getEntriesByName('first-contentful-paint')[0];
        if (e) return done(e.startTime);
        new PerformanceObserver((l) => done(l.getEntries()[0].startTime)).observe({ type: 'paint', buffered: true });
      }),
  );
  results.push(Math.round(fcp));
  await page.close();
}
console.log('first contentful paint (ms):', results.join(', '));
await browser.close();
child.kill('SIGTERM');
