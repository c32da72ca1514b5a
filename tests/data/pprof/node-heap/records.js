// Per-record sums of a pprof: objects, and sampled allocations by
// objects * (1 - e^(-(bytes/objects)/period)), read with pprof-format.
const { Profile } = require('pprof-format');
const zlib = require('zlib'); const fs = require('fs');
for (const f of process.argv.slice(2)) {
  let b = fs.readFileSync(f); if (b[0] === 0x1f) b = zlib.gunzipSync(b);
  const p = Profile.decode(b);
  const st = p.stringTable.strings;
  const types = p.sampleType.map(t => st[Number(t.type)] + '/' + st[Number(t.unit)]);
  const period = Number(p.period);
  let objs = 0, est = 0, recs = 0;
  for (const s of p.sample) {
    const o = Number(s.value[0]), by = Number(s.value[types.length - 1]);
    if (by === 0) continue;
    recs++; objs += o;
    let n = o <= 0 ? 1 : (period <= 1 || by <= 0 ? o : -o * Math.expm1(-(by / o) / period));
    est += n < 1 ? 1 : Math.round(n);
  }
  console.log(f, types.join(','), 'period', st[Number(p.periodType.type)] + '/' + st[Number(p.periodType.unit)], period, 'records', recs, 'objects', objs, 'sampled(est)', est);
}
