// node run-tests.mjs: one mock server, then every *.test.mjs file at once (node:test runs each in a
// process of its own); useMockServer({ session: true }) finds the server in MOCKAPI_URL.
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { startMockServer } from 'mockapi-cli';

const server = await startMockServer({ config: './mockapi.yaml', port: 0 });
process.env.MOCKAPI_URL = server.url;
const files = ['orders.test.mjs', 'refunds.test.mjs'];
const tests = run({ files, concurrency: files.length });
tests.on('test:fail', () => (process.exitCode = 1));
tests.compose(spec).pipe(process.stdout);
tests.once('close', () => server.close());
