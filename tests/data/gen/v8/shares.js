// shares.js: per-function self-time shares of a .cpuprofile, computed
// independently of profreg by the rule profreg's v8 parser documents:
//
//   - a function is (functionName or "(anonymous)", url); the root node is
//     not a function;
//   - sample i lasts timeDeltas[i+1] microseconds (negative deltas count
//     as 0), the way Chrome DevTools spans a sample to the next one; the
//     last sample lasts the mean of the others, DevTools' estimate for it;
//     a lone sample lasts endTime - its timestamp;
//   - a function's self time is the time of the samples whose leaf it is;
//   - the samples of "(idle)", a child of the root, are no CPU time and
//     count nowhere, neither in a function nor in the total.
//
// Prints one line per function with a non-zero self time, largest first:
// "<time share %>\t<sample share %>\t<name>\t<url>", shares to 4 places.
//
// Usage: node shares.js profile.cpuprofile > profile.shares.txt
'use strict';

const fs = require('fs');

const prof = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const byId = new Map();
for (const n of prof.nodes)
	byId.set(n.id, n);
const hasParent = new Set();
for (const n of prof.nodes)
	for (const c of n.children || [])
		hasParent.add(c);

const samples = prof.samples;
const deltas = prof.timeDeltas;
const count = samples.length;
const dur = new Array(count).fill(0);
let sum = 0;
for (let i = 0; i + 1 < count; i++) {
	dur[i] = Math.max(0, deltas[i + 1]) * 1000;
	sum += dur[i];
}
if (count > 1)
	dur[count - 1] = Math.floor(sum / (count - 1));
else if (count === 1)
	dur[0] = Math.max(0, prof.endTime - (prof.startTime + deltas[0])) * 1000;

const root = prof.nodes.find((n) => !hasParent.has(n.id));
const idle = new Set((root.children || []).filter((id) =>
	byId.get(id).callFrame.functionName === '(idle)' && byId.get(id).callFrame.url === ''));
const self = new Map();
let totalTime = 0;
let busy = 0;
for (let i = 0; i < count; i++) {
	const n = byId.get(samples[i]);
	if (idle.has(n.id))
		continue;
	totalTime += dur[i];
	busy++;
	if (!hasParent.has(n.id))
		continue; // a sample of the root belongs to no function
	const key = (n.callFrame.functionName || '(anonymous)') + '\t' + n.callFrame.url;
	const e = self.get(key) || {time: 0, samples: 0};
	e.time += dur[i];
	e.samples += 1;
	self.set(key, e);
}

const rows = [...self.entries()].filter(([, e]) => e.time > 0);
rows.sort((a, b) => b[1].time - a[1].time || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
for (const [key, e] of rows) {
	const t = (100 * e.time / totalTime).toFixed(4);
	const s = (100 * e.samples / busy).toFixed(4);
	process.stdout.write(`${t}\t${s}\t${key}\n`);
}
