/** One answer a load client got. */
export interface Answer {
  server: number;
  status: number;
  body: string;
  contentType: string | null;
  remaining: string | null;
}

/**
 * `clients` concurrent loops per base URL, each sending `GET <url>` with the key, one request at a
 * time, until `stop()` says so or a loop has sent `max` requests. Resolves to every answer
 * (pushed to `into` as they come, when given).
 */
export async function hammer(
  urls: string[],
  key: string,
  options: { clients: number; stop?: () => boolean; max?: number; into?: Answer[] },
): Promise<Answer[]> {
  const answers: Answer[] = options.into ?? [];
  const max = options.max ?? Infinity;
  const loop = async (server: number) => {
    for (let sent = 0; sent < max && !(options.stop?.() ?? false); sent++) {
      try {
        const res = await fetch(urls[server]!, { headers: { 'x-api-key': key } });
        answers.push({
          server,
          status: res.status,
          body: await res.text(),
          contentType: res.headers.get('content-type'),
          remaining: res.headers.get('ratelimit-remaining'),
        });
      } catch {
        answers.push({ server, status: 0, body: '', contentType: null, remaining: null });
      }
    }
  };
  await Promise.all(urls.flatMap((_, server) => Array.from({ length: options.clients }, () => loop(server))));
  return answers;
}
