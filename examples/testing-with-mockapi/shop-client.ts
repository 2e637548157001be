// The code under test: a tiny client of "shop-api".
export class ShopError extends Error {
  constructor(readonly status: number) {
    super(`shop-api answered ${status}`);
  }
}

export function createShopClient(baseUrl: string, apiKey: string) {
  return {
    async placeOrder(order: { item: string; quantity: number }): Promise<{ id: number; status: string }> {
      const res = await fetch(`${baseUrl}/orders`, {
        method: 'POST',
        headers: { 'X-API-Key': apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify(order),
      });
      if (!res.ok) throw new ShopError(res.status);
      return (await res.json()) as { id: number; status: string };
    },
  };
}
