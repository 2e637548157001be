import { prepareAnswerHeaders, type PreparedHeaders } from '../answer/compile.js';
import { ANY_ORIGIN } from '../answer/cors.js';
import type { RenderedAnswer } from '../answer/leaf.js';
import type { LimitStyle } from '../pipeline/limit-headers.js';
import { appendLimitHeaders, limitHeaders, type LimitVerdict } from '../pipeline/limits.js';
import type { Exchange } from './exchange.js';

/** The header lists of answers (limit headers in the styles of `limits.headers`, CORS), for the steps (through the reply). */
export interface AnswerHeaders {
  /** A precomputed list plus this request's CORS headers (`anyOrigin`: the list with the `*` ones). */
  withCors(x: Exchange, headers: readonly string[], anyOrigin: readonly string[]): readonly string[];
  /** An answer's prepared list with this request's RateLimit-* values (`x.verdict`) written in; `headers` for the unusual request. */
  filledHeaders(x: Exchange, headers: readonly string[], prepared: PreparedHeaders): readonly string[];
  /** A dynamic answer's whole list: its own, the limit headers and CORS; a `fixed` answer reuses a prepared list. */
  answerHeaders(x: Exchange, rendered: RenderedAnswer, fixed: boolean): readonly string[];
  /** The limit headers of an answer (of `x.verdict`), in the configured styles; none before the limits step. */
  limitsOf(x: Exchange): readonly string[];
}

/** The verdict of a request no limits step decided: no limit headers. */
const NO_LIMITS: LimitVerdict = { outcome: 'admitted', rate: undefined, retryAfterSeconds: 0 };
const NO_HEADERS: readonly string[] = [];

/**
 * Builds the header lists answers are written with: precomputed lists are filled in place where
 * the request allows it, so the usual answer builds no array. The session's clock (`x.scope.clock`) dates a styled quota reset.
 */
export function createAnswerHeaders(): AnswerHeaders {
  /**
   * A precomputed header list plus this request's CORS headers: `headers` itself when CORS is off,
   * `anyOrigin` (the same list with the `*` CORS headers, also precomputed) when there is no Origin to echo.
   */
  function withCors(x: Exchange, headers: readonly string[], anyOrigin: readonly string[]): readonly string[] {
    if (x.extra === ANY_ORIGIN) return anyOrigin;
    return x.extra.length === 0 ? headers : headers.concat(x.extra);
  }

  /**
   * An answer's precomputed header list with this request's RateLimit-* values filled in, in
   * place: `send` hands it to `writeHead` at once, which copies it into the response head, so no
   * earlier or later answer can see these values (see CompiledEndpoint.answerHeaders). `headers`
   * is the answer's own list, for the unusual request (an Origin to echo, a styled config).
   */
  function filledHeaders(x: Exchange, headers: readonly string[], prepared: PreparedHeaders): readonly string[] {
    const style = x.compiled.limitStyle;
    if (style !== undefined) {
      // A styled config's prepared list starts with the answer's own headers (see prepareAnswerHeaders):
      // each answer writes its limit and CORS headers after them, in place, as the usual list is filled.
      const list = prepared.answerHeaders;
      list.length = headers.length;
      return styled(x, list, style);
    }
    const verdict = x.verdict ?? NO_LIMITS;
    const { rate } = verdict;
    const usual = x.extra === ANY_ORIGIN || x.extra.length === 0; // no Origin echoed, or CORS off
    if (!usual || prepared.rateSlot >= 0 !== (rate !== undefined))
      return headers.concat(limitHeaders(verdict), x.extra);
    const list = prepared.answerHeaders;
    if (rate === undefined) return list;
    const slot = prepared.rateSlot;
    list[slot] = String(rate.limit);
    list[slot + 2] = String(rate.remaining);
    list[slot + 4] = String(rate.resetSeconds);
    return list;
  }

  /** The prepared lists of dynamic endpoints' fixed answers, made on first use (a reload makes new answers). */
  const preparedAnswers = new WeakMap<RenderedAnswer, PreparedHeaders>();

  /** The header list of a dynamic endpoint's answer: prepared once for a fixed one, as for a static endpoint. */
  function answerHeaders(x: Exchange, rendered: RenderedAnswer, fixed: boolean): readonly string[] {
    if (!fixed) {
      if (x.compiled.limitStyle !== undefined) return styled(x, rendered.headers.slice(), x.compiled.limitStyle);
      // leaf.render made this list for this request alone: it is extended in place.
      const list = appendLimitHeaders(rendered.headers as string[], x.verdict ?? NO_LIMITS);
      for (const header of x.extra) list.push(header);
      return list;
    }
    let prepared = preparedAnswers.get(rendered);
    if (prepared === undefined)
      preparedAnswers.set(
        rendered,
        (prepared = prepareAnswerHeaders(rendered.headers, x.compiled.config, x.compiled.limitStyle)),
      );
    return filledHeaders(x, rendered.headers, prepared);
  }

  /**
   * `list` (made for this answer) with the limit headers of a styled config and the request's extra
   * headers added, in place: no list is made for the limit headers alone and copied again.
   */
  function styled(x: Exchange, list: string[], style: LimitStyle): readonly string[] {
    if (x.verdict !== undefined) style.append(list, x.verdict, x.scope.clock());
    const { extra } = x;
    for (let i = 0; i < extra.length; i++) list.push(extra[i]!);
    return list;
  }

  /** The limit headers of an answer: the default list, or as `limits.headers` / `quotaRetryAfter` say. */
  function limitsOf(x: Exchange): readonly string[] {
    const { verdict } = x;
    if (verdict === undefined) return NO_HEADERS;
    const style = x.compiled.limitStyle;
    return style === undefined ? limitHeaders(verdict) : style.headers(verdict, x.scope.clock());
  }

  return { withCors, filledHeaders, answerHeaders, limitsOf };
}
