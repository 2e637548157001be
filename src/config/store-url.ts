/** `limits.store` / `--store` URLs: the schemes the Redis client takes. */

const STORE_URL = /^(redis|rediss|unix):\/\//i;

/** The URL without its password, for messages and logs. */
export function redactStoreUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@');
}

/** Says what is wrong with a store URL, or undefined when it has a scheme the client takes. */
export function checkStoreUrl(url: string): string | undefined {
  return STORE_URL.test(url)
    ? undefined
    : `must be a redis://host:port/db, rediss://… or unix:///path/to/socket URL, got ${JSON.stringify(redactStoreUrl(url))}`;
}
