// burn.js: a CPU burner with known shares, profiled to make
// tests/data/v8/node-burn.cpuprofile.
//
// Each round spins for fixed wall-clock slices: hot 5 ms, warm 3 ms, cold
// 1 ms at the bottom of a recursion (cold calls itself 4 times) and spin
// 1 ms, called from an anonymous arrow function inside cold. Expect self
// time of about 50%, 30%, 10% and 10% (less what node spends starting up
// and in "(program)"); cold's total is about 20%, counted once although it
// is on the stack five times.
//
// Run: node --cpu-prof --cpu-prof-dir=DIR --cpu-prof-interval=500 burn.js
'use strict';

let sink = 0;

// Spin until `ms` milliseconds have passed; read the clock only every
// 1000 iterations so that the time lands in the caller's frame.
function spin(ms) {
	const end = performance.now() + ms;
	let x = sink;
	for (;;) {
		for (let i = 0; i < 1000; i++)
			x = (x * 1103515245 + 12345) % 2147483647;
		if (performance.now() >= end)
			break;
	}
	sink = x;
}

function hot() {
	const end = performance.now() + 5;
	let x = sink;
	while (performance.now() < end)
		for (let i = 0; i < 1000; i++)
			x = (x * 1103515245 + 12345) % 2147483647;
	sink = x;
}

function warm() {
	const end = performance.now() + 3;
	let x = sink;
	while (performance.now() < end)
		for (let i = 0; i < 1000; i++)
			x = (x * 1103515245 + 12345) % 2147483647;
	sink = x;
}

function cold(depth) {
	if (depth > 0)
		return cold(depth - 1);
	const end = performance.now() + 1;
	let x = sink;
	while (performance.now() < end)
		for (let i = 0; i < 1000; i++)
			x = (x * 1103515245 + 12345) % 2147483647;
	sink = x;
	(() => spin(1))();
}

function main() {
	const until = performance.now() + 1500;
	while (performance.now() < until) {
		hot();
		warm();
		cold(4);
	}
	console.log(`sink ${sink}`);
}

main();
