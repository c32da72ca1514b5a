// idle.js: a server-shaped program that is idle most of the time: every
// 20 ms a timer runs handle(), which burns about 4 ms of CPU, for 2 s.
// handle is the only real work; the rest of the time the event loop
// waits, which V8's profiler records as "(idle)".
'use strict';
let sink = 0;
function handle() {
	const end = process.hrtime.bigint() + 4000000n;
	while (process.hrtime.bigint() < end)
		for (let i = 0; i < 1000; i++)
			sink += i % 7;
}
const timer = setInterval(handle, 20);
setTimeout(() => clearInterval(timer), 2000);
