// trim.js: a small, still valid cpuprofile cut from a real one, for the
// fuzzer's seed corpus: the first N samples, the nodes on their stacks,
// and endTime moved to the last kept sample.
//
// Usage: node trim.js in.cpuprofile N > out.cpuprofile
'use strict';

const fs = require('fs');

const prof = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const n = Number(process.argv[3]);
const byId = new Map(prof.nodes.map(x => [x.id, x]));
const parent = new Map();
for (const x of prof.nodes)
	for (const c of x.children || [])
		parent.set(c, x.id);

const keep = new Set();
const samples = prof.samples.slice(0, n);
const deltas = prof.timeDeltas.slice(0, n);
for (let id of samples)
	for (; id !== undefined && !keep.has(id); id = parent.get(id))
		keep.add(id);

const hits = new Map();
for (const id of samples)
	hits.set(id, (hits.get(id) || 0) + 1);
const nodes = prof.nodes.filter(x => keep.has(x.id)).map(x => {
	const y = {id: x.id, callFrame: x.callFrame, hitCount: hits.get(x.id) || 0};
	const children = (x.children || []).filter(c => keep.has(c));
	if (children.length)
		y.children = children;
	return y;
});
const endTime = prof.startTime + deltas.reduce((a, b) => a + b, 0);
process.stdout.write(JSON.stringify({nodes, startTime: prof.startTime, endTime,
	samples, timeDeltas: deltas}));
