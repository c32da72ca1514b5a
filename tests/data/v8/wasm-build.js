// Spins in the export "loop" (named "spin") of a WebAssembly module
// "calc" built here from its bytes; argv[2] goes into a custom section,
// as a rebuild changes a module's bytes and so V8's hash of them.
const code = [0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0,
  7, 8, 1, 4, 108, 111, 111, 112, 0, 0, 10, 27, 1, 25, 1, 1, 127, 3, 64, 32, 1, 32, 0,
  106, 33, 1, 32, 0, 65, 1, 107, 34, 0, 13, 0, 11, 32, 1, 11];
const str = (s) => [s.length, ...Buffer.from(s)];
const section = (id, body) => [id, body.length, ...body];
const names = [...str('name'), ...section(0, str('calc')),
  ...section(1, [1, 0, ...str('spin')])];
const bytes = new Uint8Array([...code, ...section(0, names),
  ...section(0, [...str('build'), ...Buffer.from(process.argv[2])])]);
const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
const end = Date.now() + 300;
let s = 0;
function driver() { while (Date.now() < end) s += inst.exports.loop(100000); }
driver();
console.log(s !== 0);
