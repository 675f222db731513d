// A small static file server for the web page (www/dist) and its tests: 127.0.0.1 only,
// GET and HEAD, gzip when the client accepts it, an ETag per file so that a revalidation
// (`no-cache`) costs a 304 and no body, as static hosts do. It counts what it sends.
//
//   node xtask/serve.mjs DIR [--port N]   (what `cargo xtask serve` runs; port 0 = any free)
//
// Tests import `serve({ "/": dir, "/pkg/": other })` and close the server they get.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** The file for a URL path under one of the mounts (prefix -> directory), or null. */
async function locate(mounts, path) {
  for (const [prefix, dir] of mounts) {
    if (!path.startsWith(prefix)) continue;
    const root = resolve(dir);
    let file = resolve(join(root, decodeURIComponent(path.slice(prefix.length))));
    if (file !== root && !file.startsWith(root + sep)) return null; // outside the mount
    const s = await stat(file).catch(() => null);
    if (s?.isDirectory()) file = join(file, "index.html");
    const isFile = await stat(file).then(
      (f) => f.isFile(),
      () => false,
    );
    if (isFile) return file;
  }
  return null;
}

/**
 * Starts serving; resolves to { server, url, sent } once listening on 127.0.0.1. `sent`
 * counts responses and the bytes of their headers and bodies as sent (after gzip).
 */
export async function serve(mountMap, port = 0) {
  const sent = { responses: 0, bytes: 0 };
  // Longest prefix first, so "/pkg/" wins over "/".
  const mounts = Object.entries(mountMap).sort((a, b) => b[0].length - a[0].length);
  const server = createServer(async (req, res) => {
    try {
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
        return;
      }
      const file = await locate(mounts, new URL(req.url, "http://127.0.0.1").pathname);
      if (!file) {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
        return;
      }
      let body = await readFile(file);
      const type = TYPES[extname(file)] ?? "application/octet-stream";
      const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
      const headers = { "content-type": type, "cache-control": "no-cache", etag };
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, headers).end();
        return;
      }
      if (type !== "image/png" && /\bgzip\b/.test(req.headers["accept-encoding"] ?? "")) {
        body = gzipSync(body, { level: 9 });
        headers["content-encoding"] = "gzip";
        headers.vary = "accept-encoding";
      }
      headers["content-length"] = body.length;
      res.writeHead(200, headers).end(req.method === "HEAD" ? undefined : body);
    } catch (e) {
      res.writeHead(500, { "content-type": "text/plain" }).end(`${e}\n`);
    }
  });
  // Bytes as written to the sockets: status lines, headers and bodies.
  server.on("connection", (socket) => {
    const write = socket.write;
    socket.write = function (chunk, ...rest) {
      sent.bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
      return write.call(this, chunk, ...rest);
    };
  });
  server.on("request", (_req, res) => res.on("finish", () => sent.responses++));
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", ok);
  });
  return { server, url: `http://127.0.0.1:${server.address().port}/`, sent };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [dir, flag, value] = process.argv.slice(2);
  const port = flag === "--port" ? Number(value) : 8000;
  if (!dir || !Number.isInteger(port) || port < 0 || port > 65535) {
    console.error("usage: node xtask/serve.mjs DIR [--port N]   (N in 0..=65535)");
    process.exit(2);
  }
  const { url } = await serve({ "/": dir }, port).catch((e) => {
    console.error(`cannot listen on 127.0.0.1:${port}: ${e.message}`);
    process.exit(1);
  });
  console.log(`serving ${resolve(dir)} at ${url} (Ctrl-C stops)`);
}
