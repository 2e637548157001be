import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileString } from '../../../src/expression/index.js';
import { makeContext } from '../../helpers/answer.js';

describe('expressions refused at compile time, with the offset in the string', () => {
  it.each<[string, RegExp, number]>([
    // unknown roots and functions
    ['${process.env.HOME}', /unknown source `process`/, 2],
    ['${globalThis}', /unknown source `globalThis`/, 2],
    ['${parms.id}', /unknown source `parms`; did you mean `params`\?/, 2],
    ['x ${require("fs")}', /unknown function `require`/, 4],
    ['${eval("1")}', /unknown function `eval`/, 2],
    ['${uper(params.id)}', /unknown function `uper`; did you mean `upper`\?/, 2],
    ['${uuid}', /`uuid` is a function/, 2],
    ['${index}', /`index` can only be read inside the `\$item`/, 2],
    // prototype access, in every spelling
    ['${body.__proto__}', /`__proto__` cannot be read/, 7],
    ['${body.constructor}', /`constructor` cannot be read/, 7],
    ['${body.a.prototype}', /`prototype` cannot be read/, 9],
    ["${body['__proto__']}", /`__proto__` cannot be read/, 7],
    ['${params["constructor"]}', /`constructor` cannot be read/, 9],
    ['${query.__proto__.x}', /`__proto__` cannot be read/, 8],
    ['${ {__proto__: 1} }', /`__proto__` cannot be used as a key/, 4],
    ['${headers.constructor}', /`constructor` cannot be read/, 10],
    // calls on anything but a built-in or fake.<module>.<method>
    ['${body.toString()}', /only the built-in functions/, 2],
    ['${params.id.constructor("x")}', /only the built-in functions/, 2],
    ['${fake()}', /unknown function `fake`/, 2],
    ['${fake.person()}', /`fake` needs a module and a method/, 2],
    ['${fake.person.fullName}', /must be called/, 14],
    ['${fake.constructor.constructor("x")()}', /only the built-in functions|unknown faker module/, 2],
    ['${fake.helpers.fake("{{person.firstName}}")}', /not allowed/, 2],
    ['${fake.persn.fullName()}', /unknown faker module `persn`; did you mean `fake.person`\?/, 2],
    ['${fake.person.fullname()}', /no method `fullname`; did you mean `fake.person.fullName`\?/, 2],
    ['${fake.person.firstName(query.sex)}', /must be fixed values/, 24],
    // env
    ['${env.HOME}', /only environment variables starting with MOCKAPI_/, 6],
    ['${env.PATH}', /starting with MOCKAPI_/, 6],
    ['${env}', /`env` takes a variable name/, 2],
    ['${env[query.name]}', /`env` takes a fixed name/, 6],
    // arity and literal arguments
    ['${int()}', /`int` takes 1 argument, got 0/, 2],
    ['${default(1)}', /`default` takes 2 arguments, got 1/, 2],
    ['${uuid(1)}', /`uuid` takes 0 arguments, got 1/, 2],
    ["${date('yesterday')}", /`date` takes an offset/, 7],
    // syntax
    ['${}', /empty expression/, 2],
    ['abc ${params.id', /is not closed/, 4],
    ['${params.}', /expected a name after `.`/, 9],
    ['${params.id params.name}', /unexpected `params`; expected `}`/, 12],
    ['${1 +}', /expected a value/, 5],
    ['${"open}', /no closing quote/, 2],
    ['${"bad \\q"}', /unknown escape/, 7],
    ['${a = 1}', /unexpected character `=`/, 4],
    ['${params.id; process}', /unexpected character `;`/, 11],
    ['${`x`}', /unexpected character `\``/, 2],
    ['${1a}', /a number cannot be followed by `a`/, 3],
    ['${-params.id}', /`-` may only stand before a number/, 2],
    ['${' + '('.repeat(100) + '1' + ')'.repeat(100) + '}', /nested more than 64 deep/, 67],
  ])('%s', (text, message, offset) => {
    const result = compileString(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issue.message).toMatch(message);
    expect(result.issue.offset).toBe(offset);
  });
});

describe('expressions reach nothing outside their sources at run time', () => {
  const body = JSON.parse('{"a":{"b":1},"list":[1,2],"__proto__":{"polluted":true}}') as unknown;
  const ctx = makeContext({
    body,
    query: { k: '__proto__', c: 'constructor', t: 'toString', h: 'hasOwnProperty', l: 'length' },
  });

  it.each<[string, unknown]>([
    ['${body[query.k]}', null],
    ['${body[query.c]}', null],
    ['${body[query.t]}', null],
    ['${params[query.h]}', null],
    ['${body.a[query.c][query.c]}', null],
    ['${body.toString}', null],
    ['${body.hasOwnProperty}', null],
    ['${body.polluted}', null],
    ['${body.a.valueOf}', null],
    ['${query.k.length}', null],
    ['${body.list.length}', 2],
    ['${headers.__defineGetter__}', null],
  ])('%s → %j', (text, expected) => {
    const result = compileString(text);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.evaluate(ctx)).toEqual(expected);
  });

  it('property: any computed key reads only own, non-function data of the sources', () => {
    const root = { a: { b: [1, { c: 'x' }] }, s: 'text', n: 5 };
    const ownValues = new Set<unknown>();
    const collect = (v: unknown): void => {
      ownValues.add(v);
      if (v !== null && typeof v === 'object') Object.values(v).forEach(collect);
    };
    collect(root);
    const names = fc.oneof(
      fc.constantFrom(
        '__proto__',
        'constructor',
        'prototype',
        'toString',
        'valueOf',
        'length',
        'a',
        'b',
        'c',
        '0',
        '1',
        's',
        'n',
        'hasOwnProperty',
        'call',
        'apply',
        'bind',
      ),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(names, { minLength: 1, maxLength: 5 }), (keys) => {
        const query = Object.fromEntries(keys.map((key, i) => [`k${i}`, key]));
        const text = '${body' + keys.map((_, i) => `[query.k${i}]`).join('') + '}';
        const result = compileString(text);
        if (!result.ok) return false;
        const value = result.value.evaluate(makeContext({ body: root, query }));
        return value === null || ownValues.has(value);
      }),
      { numRuns: 2000 },
    );
  });
});
