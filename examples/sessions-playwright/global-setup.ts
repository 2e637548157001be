import { startMockServer } from 'mockapi-cli';
import { startApp } from './app';

// One mock server and one app for the whole run; the tests (in their workers) read the URLs.
export default async function globalSetup() {
  const server = await startMockServer({ config: './mockapi.yaml', port: 0 });
  const app = await startApp(server.url);
  process.env.MOCKAPI_URL = server.url; // what the `mock` fixture connects to
  process.env.APP_URL = app.url;
  return async () => {
    app.close();
    await server.close();
  };
}
