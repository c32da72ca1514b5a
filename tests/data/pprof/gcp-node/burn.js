// Google pprof-nodejs 4.0.0 variant. CPU split hot:warm:cold = 5:3:1 loop units per round (SLOW=2 doubles hot),
// and a retained heap: keepBig retains 3x what keepSmall does.
const pprof = require('pprof');
const fs = require('fs');
const SLOW = Number(process.env.SLOW || 1);
const KEEP = Number(process.env.KEEP || 1);
const UNIT = 200000;
function hot() { let s = 0; for (let i = 0; i < 5 * SLOW * UNIT; i++) s += (i * 7) % 13; return s; }
function warm() { let s = 0; for (let i = 0; i < 3 * UNIT; i++) s += (i * 7) % 13; return s; }
function cold() { let s = 0; for (let i = 0; i < 1 * UNIT; i++) s += (i * 7) % 13; return s; }
const kept = [];
function keepBig() { for (let i = 0; i < 30 * KEEP; i++) kept.push(new Array(1024).fill(i)); }
function keepSmall() { for (let i = 0; i < 10; i++) kept.push(new Array(1024).fill(i)); }
async function main() {
  const [mode, out, secs] = [process.argv[2], process.argv[3], Number(process.argv[4] || 3)];
  if (mode === 'heap') pprof.heap.start(32 * 1024, 64);
  let stop; if (mode !== 'heap') stop = pprof.time.start(1000);
  const end = Date.now() + secs * 1000;
  let s = 0, rounds = 0;
  while (Date.now() < end) {
    s += hot(); s += warm(); s += cold();
    if (mode === 'heap' && rounds < 400) { keepBig(); keepSmall(); }
    rounds++;
  }
  const prof = mode === 'heap' ? pprof.heap.profile() : stop();
  fs.writeFileSync(out, await pprof.encode(prof));
  console.error(mode, 'rounds', rounds, 'kept', kept.length, s > 0);
}
main();
