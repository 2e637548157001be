// The reader of the pages' shell blocks (test/helpers/doc-commands.ts), which docs-commands.test.ts
// runs word for word: what it splits, and what each step runs.
import { describe, expect, test } from 'vitest';
import { commandsOf } from '../helpers/doc-commands.js';

const block = (body: string) => ({ page: 'README.md', line: 1, body });

describe('commandsOf', () => {
  test('`npm ci && npm start`: two steps, the install and then the rest of the line as written, comment kept', () => {
    const [install, start] = commandsOf(block('npm ci && npm start          # serves the demo on port 4010\n'));
    expect(install).toMatchObject({ bare: 'npm ci' });
    expect(start).toMatchObject({
      bare: 'npm start',
      text: 'npm start          # serves the demo on port 4010',
      comments: ['serves the demo on port 4010'],
    });
  });

  test('a command not chained to npm ci is one step, its text the line as written', () => {
    expect(commandsOf(block('npx mockapi-cli serve &   # in the background\n'))).toEqual([
      {
        text: 'npx mockapi-cli serve &   # in the background',
        bare: 'npx mockapi-cli serve &',
        comments: ['in the background'],
      },
    ]);
  });
});
