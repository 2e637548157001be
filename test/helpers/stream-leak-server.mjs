// A mock server in a process of its own for the stream leak test: it answers `resources` with its
// open file descriptors (/proc/self/fd) and its active resources by type (timers, sockets…).
import { readdirSync } from 'node:fs';
import { startMockServer } from '../../dist/index.js';

const server = await startMockServer({ config: JSON.parse(process.argv[2]), port: 0, watch: false, state: false });
process.send({ url: server.url });
process.on('message', async (message) => {
  if (message === 'resources') {
    const counts = {};
    for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
    process.send({ fds: readdirSync('/proc/self/fd').length, counts });
  } else if (message === 'stop') {
    await server.close();
    process.exit(0);
  }
});
