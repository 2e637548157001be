import { access, lstat, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { describeFsError } from '../../describe-fs-error.js';
import { writeFileAtomic } from '../../state/atomic-write.js';
import { generateApiKey } from '../../config/keys.js';
import { DEFAULT_SCHEMA_REF, PACKAGE_NAME, starterConfig } from '../../config/starter.js';
import { DEFAULT_CONFIG, EXIT_FAILURE, EXIT_OK, type CommandIO } from './io.js';

/**
 * The schema reference for the `# yaml-language-server` line: the installed package's schema
 * relative to the config file when the package is found in a `node_modules` above it, else the
 * conventional `./node_modules/mockapi-cli/…` path.
 */
async function schemaRefFor(configDir: string): Promise<string> {
  for (let dir = configDir; ; dir = dirname(dir)) {
    const schema = join(dir, 'node_modules', PACKAGE_NAME, 'schema', 'mockapi.schema.json');
    const found = await access(schema).then(
      () => true,
      () => false,
    );
    if (found) {
      const rel = relative(configDir, schema).split(sep).join('/');
      return rel.startsWith('.') ? rel : `./${rel}`;
    }
    if (dirname(dir) === dir) return DEFAULT_SCHEMA_REF;
  }
}

/** A path as a POSIX shell reads it: bare when it holds only safe characters, else single-quoted. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9._/:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The command that serves `config`: `-c` only when `serve` would not find it by default. */
function serveCommand(config: string): string {
  const command = 'npx mockapi-cli serve';
  return resolve(config) === resolve(DEFAULT_CONFIG) ? command : `${command} -c ${shellWord(config)}`;
}

/**
 * Why `target` could not be written, in words that name the path at fault: a folder on the way
 * that is a file, a folder that does not exist, or one that exists but takes no new file (`/proc`).
 */
async function whyNotWritten(target: string, err: unknown): Promise<string> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'ENOENT' && code !== 'ENOTDIR') return describeFsError(err);
  const dir = dirname(target);
  // The nearest folder on the way that exists says which of the three it is.
  for (let at = dir; ; at = dirname(at)) {
    const found = await stat(at).catch(() => undefined);
    if (found !== undefined) {
      if (!found.isDirectory()) return `${at} is a file, not a folder`;
      return at === dir
        ? `the folder ${dir} cannot be written (no file can be created in it)`
        : `the folder ${dir} does not exist`;
    }
    if (dirname(at) === at) return describeFsError(err);
  }
}

/**
 * `mockapi init`: writes a starter config with a freshly generated key, atomically. Refuses
 * (exit 1) when the file exists, unless `force`.
 */
export async function runInit(opts: { config: string; force?: boolean }, io: CommandIO): Promise<number> {
  const target = resolve(opts.config);
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isDirectory()) {
    io.err(`${opts.config} is a folder; give a file name with --config`);
    return EXIT_FAILURE;
  }
  if (existing !== undefined && opts.force !== true) {
    io.err(`${opts.config} already exists; use --force to overwrite it (its API key will be replaced)`);
    return EXIT_FAILURE;
  }
  const dir = dirname(target);
  const text = starterConfig({
    project: /\S/.test(basename(dir)) ? basename(dir) : 'my-api',
    apiKey: generateApiKey(),
    schemaRef: await schemaRefFor(dir),
  });
  try {
    await writeFileAtomic(target, text);
  } catch (err) {
    io.err(`cannot write ${opts.config}: ${await whyNotWritten(target, err)}`);
    return EXIT_FAILURE;
  }
  io.out(`Created ${opts.config} with a new API key. Start the mock with: ${serveCommand(opts.config)}`);
  return EXIT_OK;
}
