/** A path percent-decoded segment by segment (a segment that cannot be decoded stays as sent). */
export function decodePath(path: string): string {
  return path
    .split('/')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    })
    .join('/');
}
