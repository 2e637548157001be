/**
 * Known secret shapes: credentials whose form gives them away wherever they appear — the live and
 * test keys of the big API providers, JWTs, PEM private keys, cloud access keys. Recording replaces
 * them before anything is kept and scans what it is about to write once more for them.
 */

/** One kind of secret and the pattern that finds it (global). */
export interface SecretShape {
  name: string;
  pattern: RegExp;
}

const SHAPES: ReadonlyArray<[string, string]> = [
  ['a PEM private key', '-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\\s\\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)'],
  ['a JWT', '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*'],
  ['a Stripe key', '\\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}'],
  ['a Stripe webhook secret', '\\bwhsec_[A-Za-z0-9]{20,}'],
  ['an Anthropic key', '\\bsk-ant-[A-Za-z0-9_-]{20,}'],
  ['an OpenAI key', '\\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}'],
  ['a GitHub token', '\\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})'],
  ['a GitLab token', '\\bglpat-[A-Za-z0-9_-]{20,}'],
  ['a Slack token', '\\bxox[abposr]-[A-Za-z0-9-]{10,}'],
  ['an AWS access key', '\\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\\b'],
  ['a Google API key', '\\bAIza[0-9A-Za-z_-]{35}'],
  ['a SendGrid key', '\\bSG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}'],
  ['a Twilio key', '\\bSK[0-9a-f]{32}\\b'],
  ['an npm token', '\\bnpm_[A-Za-z0-9]{36}\\b'],
  ['a Shopify token', '\\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\\b'],
];

/** The known secret shapes, each a fresh global RegExp. */
export function secretShapes(): SecretShape[] {
  return SHAPES.map(([name, source]) => ({ name, pattern: new RegExp(source, 'g') }));
}

/** A secret found in a text: its kind and where it starts. */
export interface SecretHit {
  name: string;
  index: number;
}

/** Every known secret shape in `text`, in order of position. */
export function findSecretShapes(text: string): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const { name, pattern } of secretShapes()) {
    for (const m of text.matchAll(pattern)) hits.push({ name, index: m.index });
  }
  return hits.sort((a, b) => a.index - b.index);
}

/** `text` with every known secret shape replaced by `replacement`, and which kinds were replaced. */
export function replaceSecretShapes(text: string, replacement: string): { text: string; kinds: string[] } {
  const kinds: string[] = [];
  let out = text;
  for (const { name, pattern } of secretShapes()) {
    out = out.replace(pattern, () => {
      kinds.push(name);
      return replacement;
    });
  }
  return { text: out, kinds };
}
