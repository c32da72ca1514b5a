// retain.mjs: a heap workload with known shapes, profiled to make
// tests/data/v8/node-retain.heapprofile (see make-heap.sh).
//
// Everything allocated is kept alive on globalThis until exit, when node
// writes the profile, so the sampled bytes stay in the profile: about
// 4 MB of records from build (this file; called from main and from an
// anonymous arrow function), 1 MB of arrays from build in retain-lib.mjs
// (same name, another url: two functions), and 2.5 MB of arrays from make
// in two classes (same name and url, different lines: one function; the
// arrays of Left have three times the cells of those of Right).
//
// Run: node --heap-prof --heap-prof-dir=DIR --heap-prof-interval=16384 retain.mjs
import { build as buildArrays } from './retain-lib.mjs';

const kept = (globalThis.kept = []);

function build(n) {
	const out = [];
	for (let i = 0; i < n; i++)
		out.push({ id: i, name: 'record ' + i });
	return out;
}

class Left {
	make(i) {
		return { side: 'left', cells: new Array(96).fill(i) };
	}
}

class Right {
	make(i) {
		return { side: 'right', cells: new Array(32).fill(i) };
	}
}

function cells() {
	const l = new Left(), r = new Right();
	for (let i = 0; i < 2000; i++)
		kept.push(l.make(i), r.make(i));
}

function main() {
	for (let i = 0; i < 40; i++)
		kept.push(build(1000));
	buildArrays(kept, 250);
	cells();
	(() => {
		for (let i = 0; i < 20; i++)
			kept.push(build(500));
	})();
}

main();
