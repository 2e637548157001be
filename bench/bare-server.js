// The baseline: a bare node:http server answering every request with the same body and the same
// header names as mockapi's JSON response (values fixed), so a ratio against it measures what
// mockapi's pipeline costs, not a difference in bytes on the wire. Prints a ready line like
// mockapi's, with its URL, on stdout.
//
// BENCH_COALESCE=1 ends the answers made in one event-loop turn together in a setImmediate, as
// mockapi does (src/http/write-batch.ts): `bench/run.js --baseline coalesced` measures against it,
// to tell what mockapi's own steps cost apart from how it writes (BENCHMARKS.md).
//
// BENCH_WORKERS=n runs n such servers on one port with node:cluster, as `serve --workers n` does:
// the bare cluster the workers figure is read against. The primary prints the ready line once
// every worker listens.
import cluster from 'node:cluster';
import { createServer } from 'node:http';

const workers = Number(process.env.BENCH_WORKERS ?? 0);
if (workers > 0 && cluster.isPrimary) {
  let listening = 0;
  cluster.on('listening', (_worker, address) => {
    if (++listening === workers)
      process.stdout.write(`bare cluster of ${workers} listening on http://127.0.0.1:${address.port}\n`);
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  let exited = 0;
  cluster.on('exit', () => ++exited === workers && process.exit(0));
  const stop = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  serve();
}

function serve() {
  const text = process.env.BENCH_BODY ?? '{"ok":true}';
  const body = Buffer.from(text, 'utf8');
  const headers = [
    'content-type',
    'application/json; charset=utf-8',
    'content-length',
    String(body.length),
    'RateLimit-Limit',
    '100000',
    'RateLimit-Remaining',
    '99999',
    'RateLimit-Reset',
    '1',
    'access-control-allow-origin',
    '*',
    'access-control-expose-headers',
    'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After',
  ];

  const MAX_HELD = 32;
  let pending = [];
  function flush() {
    const list = pending;
    pending = [];
    for (const res of list) res.end(body);
  }

  const server =
    process.env.BENCH_COALESCE === '1'
      ? createServer((req, res) => {
          res.writeHead(200, headers);
          if (pending.length === MAX_HELD) flush(); // as mockapi: at most 32 answers held (MAX_HELD_ANSWERS)
          if (pending.push(res) === 1) setImmediate(flush);
        })
      : createServer((req, res) => {
          res.writeHead(200, headers);
          res.end(body);
        });
  const stop = () => server.close(() => process.exit(0)) && server.closeAllConnections();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // In a cluster worker, port 0 is one port shared by every worker (the primary's).
  server.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', () => {
    if (!cluster.isWorker) process.stdout.write(`bare listening on http://127.0.0.1:${server.address().port}\n`);
  });
}
