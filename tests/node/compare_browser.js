'use strict';
// compare_browser.js CHROME URL USER PASSWORD OUTDIR: drive headless Chromium
// through the comparison page of `profreg serve` over the DevTools protocol
// on a pipe (--remote-debugging-pipe: no port, no npm package). The
// browser meets the server's 401 challenge and answers it as a person
// would at the prompt; it picks the service, then two releases, submits,
// and the rendered diff page is checked. Prints one JSON object of what it
// found; OUTDIR gets compare.png (the whole page) and frame.png (the
// regressed frame). Every wait is bounded.
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const [chrome, start, user, password, outdir] = process.argv.slice(2);
const proc = spawn(chrome, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage',
  '--hide-scrollbars', '--force-device-scale-factor=1', '--window-size=1400,1600',
  '--user-data-dir=' + path.join(outdir, 'chrome'), '--remote-debugging-pipe', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
const toChrome = proc.stdio[3], fromChrome = proc.stdio[4];
proc.stderr.on('data', () => {});

const found = { auth_challenges: 0, console_errors: [] };
let nextId = 1, session = null, pending = new Map(), waiters = [], inbox = '';
const timer = setTimeout(() => done('timed out'), 60000);

function done(error) {
  clearTimeout(timer);
  if (error) found.error = String(error);
  process.stdout.write(JSON.stringify(found) + '\n');
  try { proc.kill('SIGKILL'); } catch (e) { /* gone */ }
  process.exit(0);
}

function send(method, params, sessionId) {
  const id = nextId++;
  const msg = { id, method, params: params || {} };
  if (sessionId) msg.sessionId = sessionId;
  toChrome.write(JSON.stringify(msg) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}
const page = (method, params) => send(method, params, session);

// Resolve when an event named `method` arrives (after this call).
function event(method, ms) {
  return new Promise((resolve, reject) => {
    const w = { method, resolve };
    waiters.push(w);
    setTimeout(() => {
      const i = waiters.indexOf(w);
      if (i >= 0) { waiters.splice(i, 1); reject(new Error('no ' + method + ' within ' + ms + ' ms')); }
    }, ms);
  });
}

function onMessage(m) {
  if (m.id && pending.has(m.id)) {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p.reject(new Error(p.method + ': ' + m.error.message));
    else p.resolve(m.result);
    return;
  }
  if (!m.method) return;
  if (m.method === 'Fetch.requestPaused')
    page('Fetch.continueRequest', { requestId: m.params.requestId }).catch(() => {});
  else if (m.method === 'Fetch.authRequired') {
    found.auth_challenges++;
    found.challenge_scheme = m.params.authChallenge.scheme;
    page('Fetch.continueWithAuth', {
      requestId: m.params.requestId,
      authChallengeResponse: { response: 'ProvideCredentials', username: user, password },
    }).catch(() => {});
  } else if (m.method === 'Runtime.exceptionThrown')
    found.console_errors.push(m.params.exceptionDetails.text);
  else if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error')
    found.console_errors.push(m.params.entry.text);
  for (const w of waiters.slice())
    if (w.method === m.method) { waiters.splice(waiters.indexOf(w), 1); w.resolve(m.params); }
}

fromChrome.on('data', (chunk) => {
  inbox += chunk.toString('utf8');
  let i;
  while ((i = inbox.indexOf('\0')) >= 0) {
    const text = inbox.slice(0, i);
    inbox = inbox.slice(i + 1);
    try { onMessage(JSON.parse(text)); } catch (e) { done(e); }
  }
});
proc.on('exit', () => done('chromium exited'));

async function evaluate(expr) {
  const r = await page('Runtime.evaluate', { expression: expr, returnByValue: true });
  if (r.exceptionDetails) throw new Error('page script: ' + r.exceptionDetails.text);
  return r.result.value;
}

// Run `act` in the page and wait for the navigation it starts to load.
async function navigates(act) {
  const loaded = event('Page.loadEventFired', 20000);
  await evaluate(act);
  await loaded;
}

async function main() {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  ({ sessionId: session } = await send('Target.attachToTarget', { targetId, flatten: true }));
  await page('Page.enable');
  await page('Runtime.enable');
  await page('Log.enable');
  await page('Fetch.enable', { handleAuthRequests: true, patterns: [{ urlPattern: '*' }] });

  // The list of services, behind the Basic challenge.
  let loaded = event('Page.loadEventFired', 20000);
  await page('Page.navigate', { url: start });
  await loaded;
  found.services = await evaluate(
    "[].map.call(document.querySelectorAll('#service option'), o => o.value)");

  // Pick the service, then the two releases, as a person would.
  await navigates("document.getElementById('service').value='web';" +
    "document.getElementById('next').click()");
  found.picker_url = await evaluate('location.href');
  found.releases = await evaluate(
    "[].map.call(document.querySelectorAll('#a option'), o => o.value).filter(v => /^release:/.test(v))");
  await navigates("document.getElementById('a').value='release:v1';" +
    "document.getElementById('b').value='release:v2';" +
    "document.getElementById('compare').click()");
  found.url = await evaluate('location.href');
  found.title = await evaluate('document.title');

  // The diff page: its frames, the regressed one red, and its script at work.
  Object.assign(found, await evaluate(`(function(){
    var fr=[].slice.call(document.querySelectorAll('svg.flame g.fr'));
    function rgb(g){var f=g.querySelector('rect').getAttribute('fill');
      return [parseInt(f.substr(1,2),16),parseInt(f.substr(3,2),16),parseInt(f.substr(5,2),16)];}
    function redness(g){var c=rgb(g);return c[0]-(c[1]+c[2])/2;}
    var tax=fr.filter(function(g){return g.dataset.name==='checkout.computeTax';})[0];
    var hostile=fr.filter(function(g){return g.dataset.name==='<script>alert(1)</script>';})[0];
    var reddest=fr.reduce(function(a,g){return redness(g)>redness(a)?g:a;});
    var bb=tax.querySelector('rect').getBoundingClientRect();
    var before=+tax.querySelector('rect').getAttribute('width');
    tax.dispatchEvent(new MouseEvent('click',{bubbles:true}));
    var after=+tax.querySelector('rect').getAttribute('width');
    tax.dispatchEvent(new MouseEvent('click',{bubbles:true}));
    return {frames:fr.length, reddest:reddest.dataset.name, tax_fill:rgb(tax),
      hostile_is_text:!!hostile, scripts:document.querySelectorAll('script').length,
      zoomed:after>before, zoom_width:after,
      tax_box:[Math.round(bb.left+window.scrollX),Math.round(bb.top+window.scrollY),
               Math.round(bb.width),Math.round(bb.height)]};
  })()`));
  const [x, y, w, h] = found.tax_box;
  const shot = await page('Page.captureScreenshot', {
    format: 'png', captureBeyondViewport: true,
    clip: { x: x + 2, y: y + 2, width: Math.max(w - 4, 1), height: Math.max(h - 4, 1), scale: 1 },
  });
  fs.writeFileSync(path.join(outdir, 'frame.png'), Buffer.from(shot.data, 'base64'));
  const whole = await page('Page.captureScreenshot', { format: 'png' });
  fs.writeFileSync(path.join(outdir, 'compare.png'), Buffer.from(whole.data, 'base64'));
  done();
}

main().catch(done);
