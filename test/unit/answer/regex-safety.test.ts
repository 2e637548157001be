// The judge of `matches` patterns: patterns whose backtracking can explode are refused, ordinary
// ones (those of the examples, the tests and the OpenAPI import) are accepted.
import { describe, expect, test } from 'vitest';
import { backtrackingRisk } from '../../../src/regex/regex-safety.js';

const REFUSED: Array<[string, string?]> = [
  ['^(\\d+,?)+$'],
  ['(a+)+'],
  ['^(a+)+$'],
  ['(a*)*b'],
  ['(a|a)*'],
  ['(a|aa)+'],
  ['^(a|aa)+$'],
  ['(.*a){20}'],
  ['(a{1,3})+$'],
  ['^(\\w+\\s?)+$'],
  ['^(\\w+\\s*)+$'],
  ['(a+ba+)+$'],
  ['^(?:a|b+)+$'],
  ['^([a-z]+)*$', 'i'],
  ['^(x+x+)+y$'],
  ['^(\\d|\\d\\d)+$'],
  ['(?=(a+)+$)'],
  ['^(\\w+\\1)+$'],
  ['^([^,]+,?)*$'],
  ['^(A+a)+$', 'i'],
  ['^(?:[\\s\\S]+x)+$'],
  ['^((ab)*)+$'],
  ['(\\p{L}+\\p{Ll})+$', 'u'],
  ['.*a.*b'],
  ['.*a.*$'],
  ['^\\d+\\d+\\d+x'],
  ['^.*?a.*?a.*?b'],
  ['x\\s*\\s*\\s*$'],
  ['(?:[a-z]+=[a-z0-9]+&)*[a-z]+=[a-z0-9]+'],
];

const ACCEPTED: Array<[string, string?]> = [
  ['^\\d+$'],
  ['^acme-\\d+$', 'i'],
  ['^ada$', 'i'],
  ['^1\\d\\d$'],
  ['^a+$'],
  ['.*'],
  ['END'],
  ['^\\[+'],
  ['(^|[,;])\\s*example=("x"|x)\\s*($|[,;])'],
  ['(\\d{1,3}\\.){3}\\d{1,3}'],
  ['^([a-z0-9-]+\\.)+[a-z]{2,}$', 'i'],
  ['^\\w+(?:,\\s*\\w+)*$'],
  ['^(\\w+\\s)+$'],
  ['^[^@\\s]+@[^@\\s]+\\.[a-z]+$'],
  ['^(GET|POST|PUT)$'],
  ['^(?:foo|bar)+$'],
  ['^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2})?$'],
  ['^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', 'i'],
  ['^Bearer [A-Za-z0-9._~+/-]+=*$'],
  ['^(?<year>\\d{4})-(?<month>\\d\\d)$'],
  ['^(\\d+)-\\1$'],
  ['^(?:\\+\\d{1,3})?[ -]?\\d{6,12}$'],
  ['^(?:[a-z]+=[a-z0-9]+&)*[a-z]+=[a-z0-9]+$'],
  ['^[\\p{L}]+$', 'u'],
  ['a.*b'],
  ['.*a.*'],
  ['^.*foo.*bar$'],
  ['\\d+x'],
  ['\\s+$'],
  ['^\\s*\\w+\\s*$'],
  ['^[\\q{abc}a-z]+$', 'v'],
];

describe('backtrackingRisk', () => {
  test.each(REFUSED)('refuses %s', (pattern, flags = '') => {
    expect(() => new RegExp(pattern, flags)).not.toThrow();
    expect(backtrackingRisk(pattern, flags)).toMatch(
      /^(the repeated part `.+` (has alternatives|holds another repeat)|the repeat `.+` comes after other repeats that can take the same characters)/,
    );
  });

  test.each(ACCEPTED)('accepts %s', (pattern, flags = '') => {
    expect(() => new RegExp(pattern, flags)).not.toThrow();
    expect(backtrackingRisk(pattern, flags)).toBeUndefined();
  });

  test('names the repeated part', () => {
    expect(backtrackingRisk('.*a.*b', '')).toMatch(
      /^the repeat `\.\*` comes after other repeats that can take the same characters \(as in \.\*a\.\*b, where the search/,
    );
    expect(backtrackingRisk('^id-(\\d+,?)+$', '')).toMatch(/^the repeated part `\(\\d\+,\?\)\+` holds another repeat/);
    expect(backtrackingRisk('x(a|aa){2,5}', '')).toMatch(/^the repeated part `\(a\|aa\)\{2,5\}` has alternatives/);
  });
});
