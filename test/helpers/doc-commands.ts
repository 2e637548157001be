// The shell blocks of the user pages, read as commands, and the bash driver that runs one session
// of them word for word (test/e2e/docs-commands.test.ts): foreground commands to completion, servers in
// the background until their port answers, stopped at the end (or when the next server wants their
// port) with SIGINT to their process group, as Ctrl-C would.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

/** A fenced shell block of a page. */
export interface ShellBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  body: string;
}

/** One command of a block: its text as written (continuation lines included) and what follows it. */
export interface DocCommand {
  /** Exactly as the page writes it, `\`-continued lines and a trailing comment included. */
  text: string;
  /** The command alone: continuations joined, the trailing comment and a `$ ` prompt dropped. */
  bare: string;
  /** Its trailing comment and the comment lines under it, without `#`. */
  comments: string[];
  /** In a `$ ` block: the lines the page shows as its output. */
  output?: string[];
  /** Under `# in the mockapi checkout` / `# in your project`, when the block says. */
  place?: 'checkout' | 'project';
}

/** The pages whose shell blocks are commands a reader runs. */
export function userPages(): string[] {
  const docs = (dir: string) =>
    readdirSync(join(ROOT, dir))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `${dir}/${f}`);
  return ['README.md', ...docs('docs'), ...docs('docs/internals')];
}

const SHELL_FENCE = /^```(sh|bash|console|shell|shell-session)\s*$/;

export function shellBlocks(page: string): ShellBlock[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]!);
    if (fence === null) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (SHELL_FENCE.test(lines[i]!)) blocks.push({ page, line: i + 1, body: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Where a `#` starts a comment: at a word's start, outside quotes. */
function commentStart(line: string): number {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return i;
  }
  return -1;
}

export function commandsOf(block: ShellBlock): DocCommand[] {
  const commands: DocCommand[] = [];
  const console = block.body.split('\n').some((l) => l.startsWith('$ '));
  let place: DocCommand['place'];
  const lines = block.body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const last = commands[commands.length - 1];
    if (console && !line.startsWith('$ ')) {
      if (last !== undefined) (last.output ??= []).push(line);
      continue;
    }
    if (trimmed.startsWith('#')) {
      const note = trimmed.replace(/^#\s?/, '');
      if (/^in the mockapi checkout$/i.test(note)) place = 'checkout';
      else if (/^in your project$/i.test(note)) place = 'project';
      else if (last !== undefined) last.comments.push(note);
      continue;
    }
    if (console) line = line.slice(2);
    const physical = [line];
    while (physical[physical.length - 1]!.endsWith('\\') && i + 1 < lines.length) physical.push(lines[++i]!);
    const tail = physical[physical.length - 1]!;
    const at = commentStart(tail);
    const comments = at === -1 ? [] : [tail.slice(at).replace(/^#\s?/, '').trim()];
    const code = [...physical.slice(0, -1), at === -1 ? tail : tail.slice(0, at)].join('\n');
    const made = { text: physical.join('\n'), comments, ...(place === undefined ? {} : { place }) };
    const bare = code.replace(/\\\n\s*/g, ' ').trim();
    // `npm ci && npm start`, `npm ci && npm test`: the README's commands for a fresh clone. A shell runs
    // the second only when the install succeeded; so does the harness, running them as two steps in
    // order (the install on this machine's network, as every `npm ci`), each as written: the second
    // step's text is the line after `npm ci && ` (a driver running the whole line would install twice).
    const chained = /^npm ci && (\S[\s\S]*)$/.exec(bare);
    if (chained === null) commands.push({ ...made, bare });
    else
      commands.push(
        { ...made, bare: 'npm ci' },
        { ...made, text: made.text.replace(/^(\s*)npm ci && /, '$1'), bare: chained[1]! },
      );
  }
  return commands;
}

/** The ports a server command listens on: `--port <n>` (also after `npm start --`), else 4010; redis 6379. */
export function portsOf(bare: string, extra: readonly number[] = []): number[] {
  if (/^redis-server\b/.test(bare)) return [6379, ...extra];
  const port = /--port (\d+)/.exec(bare);
  return [port === null ? 4010 : Number(port[1]), ...extra];
}

/** A command that keeps running: a server, a recording, redis-server. */
export function isServer(bare: string): boolean {
  if (/\s(--help|-h)\b/.test(bare)) return false;
  return (
    /\bnpx mockapi(-cli)? (serve|record)\b/.test(bare) ||
    /(^|&& )npm start\b/.test(bare) ||
    /^redis-server\b/.test(bare)
  );
}

export interface DriverStep {
  /** Names its output files (`<id>.out`, `.err`, `.rc`): `c<n>` for the n-th command of the session, `h<n>` for the harness's own. */
  id: string;
  /** What bash runs: the command's text as the page writes it, or the harness's own lines. */
  text: string;
  server?: { ports: number[] };
  /** Harness lines to run before the step, and after it (after its ports answer, for a server). */
  before?: string;
  after?: string;
  /** The exit status it must end with (default 0): the driver goes on only after that one. */
  rc?: number;
}

/** Bash that runs the steps in `dir`, writing each step's stdout, stderr and exit code under `out`. */
export function driverScript(dir: string, out: string, steps: readonly DriverStep[]): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const lines = [
    'set -m', // each background job gets a process group of its own: SIGINT reaches every process of it
    `OUT=${q(out)}`,
    `cd ${q(dir)} || exit 97`,
    '__servers=()',
    '__ports=()',
    // Ctrl-C to one server: SIGINT to its group, then wait until every process of it is gone.
    '__stop() { local pg=$1; kill -INT -- "-$pg" 2>/dev/null; local end=$((SECONDS+30)); while kill -0 -- "-$pg" 2>/dev/null; do if ((SECONDS>end)); then kill -KILL -- "-$pg" 2>/dev/null; fi; sleep 0.05; done; }',
    '__stop_all() { local i; for i in "${!__servers[@]}"; do [[ -n ${__servers[$i]} ]] && __stop "${__servers[$i]}"; done; }',
    `trap '__stop_all' EXIT`,
    // A port of this session's own servers that another server is about to take: Ctrl-C that one first.
    '__free() { local i p; for i in "${!__servers[@]}"; do for p in ${__ports[$i]}; do if [[ " $* " == *" $p "* && -n ${__servers[$i]} ]]; then __stop "${__servers[$i]}"; __servers[$i]=; fi; done; done; }',
    // Until each port accepts a connection, while the server's group lives.
    '__ready() { local pg=$1; shift; local end=$((SECONDS+240)) p; for p in "$@"; do until (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do kill -0 -- "-$pg" 2>/dev/null || return 1; ((SECONDS>end)) && return 1; sleep 0.05; done; done; }',
    // Until a file holds a text (a line a server or a receiver wrote).
    `__wait_for() { local end=$((SECONDS+60)); until grep -qF -- "$2" "$1" 2>/dev/null; do ((SECONDS>end)) && { echo "no \\"$2\\" in $1 after 60 s" >&2; return 1; }; sleep 0.05; done; }`,
  ];
  for (const step of steps) {
    const at = (ext: string) => q(`${out}/${step.id}.${ext}`);
    if (step.before !== undefined)
      lines.push(step.before, `test $? -eq 0 || { echo "before ${step.id} failed" >${at('rc')}; exit 1; }`);
    const files = `>${at('out')} 2>${at('err')}`;
    if (step.server !== undefined) {
      const ports = step.server.ports.join(' ');
      lines.push(`__free ${ports}`);
      // A line that ends in `&` backgrounds itself inside the braces; any other server line is backgrounded whole.
      if (/&\s*(#.*)?$/.test(step.text)) lines.push(`{ ${step.text}\n} ${files}`);
      else lines.push(`{ ${step.text}\n} ${files} &`);
      lines.push(`__pg=$!; __servers+=("$__pg"); __ports+=(${q(ports)}); echo "$__pg" >>${q(`${out}/pids`)}`);
      lines.push(
        `__ready "$__pg" ${ports} || { echo "not listening on ${ports}" >${at('rc')}; exit 1; }`,
        `echo 0 >${at('rc')}`,
      );
    } else {
      lines.push(
        `{ ${step.text}\n} ${files}`,
        `__rc=$?; echo "$__rc" >${at('rc')}`,
        `test "$__rc" -eq ${step.rc ?? 0} || exit 1`,
      );
    }
    if (step.after !== undefined)
      lines.push(step.after, `test $? -eq 0 || { echo "after ${step.id} failed" >${at('rc')}; exit 1; }`);
  }
  return `${lines.join('\n')}\n`;
}
