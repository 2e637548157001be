import { createServer } from 'node:http';

// The app under test: a page that asks the API (the mock, another origin) for the cart.
export function startApp(apiUrl: string): Promise<{ url: string; close(): void }> {
  const page = `<!doctype html><title>Shop</title><p id="cart">…</p><script>
fetch(${JSON.stringify(apiUrl)} + '/mock/cart', { headers: { 'x-api-key': 'mk_sessionsExample00000000000000001' } })
  .then((res) => res.json())
  .then((cart) => { document.getElementById('cart').textContent = cart.items + ' items'; });
</script>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
  return new Promise((ready) => server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    ready({ url: `http://127.0.0.1:${port}`, close: () => server.close() });
  }));
}
