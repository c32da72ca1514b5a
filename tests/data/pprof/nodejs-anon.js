// Wall profile (@datadog/pprof 5.20.0) of a named and an anonymous
// function; PAD marks where v2 has three more lines, as a release's
// edits above the anonymous function move it down.
const pprof = require('@datadog/pprof');
const fs = require('fs');
//PAD
function named() { let s = 0; for (let i = 0; i < 100000; i++) s += i % 5; return s; }
(async () => {
  pprof.time.start({ durationMillis: 5000, intervalMicros: 2000 });
  const end = Date.now() + 1000;
  let s = 0;
  while (Date.now() < end) {
    s += named();
    [2].forEach(function (x) { for (let i = 0; i < 200000; i++) s += i % x; });
  }
  fs.writeFileSync(process.argv[2], await pprof.encode(await pprof.time.stop()));
  console.log(s > 0);
})();
