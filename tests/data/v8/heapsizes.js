// heapsizes.js: per-function live bytes of a .heapprofile, computed
// independently of profreg by the rule profreg's v8heap parser documents:
//
//   - a function is (functionName or "(anonymous)", url); the root node
//     ("head") is not a function;
//   - each node with selfSize > 0 is one stack, from the root's child down
//     to the node; its selfSize is the node's function's self bytes, and
//     counts once toward the total bytes of each function on that stack,
//     however often the function is on it;
//   - the "samples" array only counts: its records that name a node with
//     selfSize > 0 are the sampled allocations behind those bytes.
//
// Prints "total\t<bytes>" (every selfSize, the root's included),
// "samples\t<count>" (the records of "samples" counted so), then one
// line per function with non-zero total bytes, largest self first, then
// largest total, then by name and url: "<self>\t<total>\t<name>\t<url>".
//
// Usage: node heapsizes.js profile.heapprofile > profile.selfsizes.txt
'use strict';

const fs = require('fs');

const prof = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const self = new Map();
const total = new Map();
let all = 0;

function key(node) {
	return (node.callFrame.functionName || '(anonymous)') + '\t' + node.callFrame.url;
}

// Iterative, so that a deep tree cannot overflow the JavaScript stack.
const todo = [[prof.head, []]];
while (todo.length) {
	const [node, above] = todo.pop();
	const stack = node === prof.head ? [] : above.concat([key(node)]);
	all += node.selfSize;
	if (node.selfSize > 0 && stack.length) {
		const leaf = stack[stack.length - 1];
		self.set(leaf, (self.get(leaf) || 0) + node.selfSize);
		for (const f of new Set(stack))
			total.set(f, (total.get(f) || 0) + node.selfSize);
	}
	for (const child of node.children || [])
		todo.push([child, stack]);
}

const withBytes = new Set();
const nodes = [prof.head];
while (nodes.length) {
	const node = nodes.pop();
	if (node.selfSize > 0)
		withBytes.add(node.id);
	for (const child of node.children || [])
		nodes.push(child);
}
const sampled = (prof.samples || []).filter((s) => withBytes.has(s.nodeId)).length;

const rows = [...total.keys()].map((f) => [self.get(f) || 0, total.get(f), f]);
rows.sort((a, b) => b[0] - a[0] || b[1] - a[1] || (a[2] < b[2] ? -1 : a[2] > b[2]));
console.log(`total\t${all}`);
console.log(`samples\t${sampled}`);
for (const [s, t, f] of rows)
	console.log(`${s}\t${t}\t${f}`);
