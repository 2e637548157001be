import { expect, inject, test } from 'vitest';

test('the client reads a user from the mock', async () => {
  const res = await fetch(`${inject('mockUrl')}/users/42`, {
    headers: { 'X-API-Key': 'mk_vitestExample00000000000000000005' },
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ id: 42, name: 'Ada' });
});
