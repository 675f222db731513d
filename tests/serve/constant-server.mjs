// The baseline of tests/serve/bench.mjs: a Node http server that does what `snowdrift
// serve` does around its IDs (the request's body read and parsed, `count` checked, an
// answer of `count` decimal IDs written as JSON) with a constant ID instead of a lease and
// a generator. Prints its URL, listens on a free port of 127.0.0.1, stops on SIGTERM.
import http from "node:http";

const ID = "384746053389254656"; // as long as the IDs the service answers today

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const { count } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (!Number.isInteger(count) || count < 1 || count > 1000) {
      res.writeHead(400, { "content-type": "application/json" });
      return res.end('{"error":{"code":"BAD_REQUEST","message":"count"}}');
    }
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify({ ids: Array.from({ length: count }, () => ID) }));
  });
});
server.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
