import { test, expect } from 'mockapi-cli/playwright';

test('an empty cart, as the config has it', async ({ page, mock }) => {
  await page.goto(process.env.APP_URL!);
  await expect(page.locator('#cart')).toHaveText('0 items');
  const [request] = await mock.waitForRequests({ path: '/mock/cart' });
  expect(request.headers.baggage).toBe(`mockapi.session=${mock.id}`); // the page's request, in this session
});

test('a full cart, in this test alone', async ({ page, mock }) => {
  await mock.stub({ method: 'GET', path: '/cart', response: { body: { items: 3 } } });
  await page.goto(process.env.APP_URL!);
  await expect(page.locator('#cart')).toHaveText('3 items');
});
