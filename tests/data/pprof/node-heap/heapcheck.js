// Heap profile by @datadog/pprof (or Google's pprof with GP=1), and the
// number of sampled allocations V8 holds for it, read in the same moment
// through the inspector (HeapProfiler.getSamplingProfile's "samples").
const pprof = require(process.env.GP ? 'pprof' : '@datadog/pprof');
const fs = require('fs');
const inspector = require('inspector');
const KEEP = Number(process.env.KEEP || 1);
const kept = [];
function keepBig() { for (let i = 0; i < 30 * KEEP; i++) kept.push(new Array(1024).fill(i)); }
function keepSmall() { for (let i = 0; i < 10; i++) kept.push(new Array(1024).fill(i)); }
pprof.heap.start(32 * 1024, 64);
for (let r = 0; r < 400; r++) { keepBig(); keepSmall(); }
const s = new inspector.Session(); s.connect();
s.post('HeapProfiler.enable', () => s.post('HeapProfiler.getSamplingProfile', async (err, res) => {
  if (err) throw new Error(JSON.stringify(err));
  const prof = pprof.heap.profile();
  fs.writeFileSync(process.argv[2], await pprof.encode(prof));
  let bytes = 0; for (const x of res.profile.samples) bytes += x.size;
  console.log('v8 samples', res.profile.samples.length, 'sampled bytes', bytes, 'kept', kept.length);
}));
