import { describe, expect, it } from 'vitest';
import { compileParamReader } from '../../../src/answer/request-context.js';

const read = (route: string, path: string): Record<string, string> => ({ ...compileParamReader(route)(path) });

describe('compileParamReader (walks the path to the named segments only)', () => {
  it('reads named segments, decoded, ignoring a trailing slash', () => {
    expect(read('/users/:id', '/users/42')).toEqual({ id: '42' });
    expect(read('/users/:id', '/users/42/')).toEqual({ id: '42' });
    expect(read('/a/:x/b/:y', '/a/%41/b/%zz')).toEqual({ x: 'A', y: '%zz' });
    expect(read('/:a/:b/:c', '/1/2/3/4')).toEqual({ a: '1', b: '2', c: '3' });
  });

  it('a segment the path does not reach reads as empty', () => {
    expect(read('/a/:x/b/:y', '/a/1/b')).toEqual({ x: '1', y: '' });
    expect(read('/users/:id', '/users')).toEqual({ id: '' });
    expect(read('/a/:x/b/:y', '/a/1//2')).toEqual({ x: '1', y: '2' });
  });

  it('a trailing * takes the rest of the path', () => {
    expect(read('/files/*', '/files/a/b/c/')).toEqual({ '*': 'a/b/c' });
    expect(read('/u/:id/*', '/u/7/q%20r')).toEqual({ id: '7', '*': 'q r' });
  });
});
