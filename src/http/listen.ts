import type { Server } from 'node:net';

/** Thrown when the server cannot listen (port in use, address not available…). */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    /** The same in the CLI's words (`--port 0` where the programmatic API says `port: 0`). */
    readonly cliMessage: string = message,
  ) {
    super(message);
    this.name = 'ListenError';
  }
}

/** Which port a message is about, and how to ask for any free one in the API and on the command line. */
export interface PortWords {
  label: string;
  option: string;
  flag: string;
}

const HTTP_PORT: PortWords = { label: 'port', option: 'port: 0', flag: '--port 0' };
/** The HTTPS port's words. */
export const HTTPS_PORT: PortWords = { label: 'HTTPS port', option: 'https: { port: 0 }', flag: '--https 0' };

/** Listens on `host:port`; rejects with a {@link ListenError} that says what went wrong in words. */
export function listen(server: Server, port: number, host: string, words: PortWords = HTTP_PORT): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (err.code === 'EADDRINUSE') {
        const inUse = `${words.label} ${port} on ${host} is already in use`;
        reject(
          new ListenError(
            `${inUse} (try ${words.option} for any free port)`,
            err.code,
            `${inUse} (try ${words.flag} for any free port)`,
          ),
        );
      } else if (err.code === 'EACCES') reject(new ListenError(`no permission to listen on ${where}`, err.code));
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new ListenError(`address ${host} is not available on this machine`, err.code));
      else reject(new ListenError(`cannot listen on ${where}: ${err.message}`, err.code));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.removeListener('error', onError);
      resolvePromise();
    });
  });
}

/** The URL to print and to reach the server at (`0.0.0.0` and `::` are reached on 127.0.0.1). */
export function formatUrl(host: string, port: number, scheme: 'http' | 'https' = 'http'): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `${scheme}://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}
