// Code of no script: a function made by eval and one by new Function,
// run long enough in each tier of the JIT to be sampled there.
const evalSpin = eval('(function evalSpin(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s; })');
const fnSpin = new Function('n', 'let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s;');
let t = 0;
const end = Date.now() + 600;
while (Date.now() < end)
	t += evalSpin(3000) + fnSpin(3000);
console.log(t > 0);
