import { DEFAULT_BASE_PATH } from '../config/build-lookalike.js';
import { jsonAnswer, styleAnswer, type ResourceAnswer } from './answers.js';
import { compileFilters, githubLink, listBody, parseListQuery, planList, unknownCursor } from './list.js';
import type { Call } from './operations.js';
import { after, type MaybePromise } from './store.js';

/**
 * Stripe's `url`: the collection's path as the API names it (`/v1/customers`) — under a base path
 * of the API's own (`basePath: /v1`, `path: /customers`), not under mockapi's `/mock`.
 */
function apiPath(basePath: string, path: string): string {
  return basePath === DEFAULT_BASE_PATH ? path : `${basePath}${path}`;
}

/** `GET <path>`: a page in the style's shape, filtered by every other query parameter. */
export function listObjects(call: Call): MaybePromise<ResourceAnswer> {
  const { resource, req, coll, match } = call;
  const query = parseListQuery(req.query);
  const path = req.path.replace(/\/$/, '') || '/';
  const input = {
    query,
    urlPath: `${req.basePath}${path}`,
    origin: req.origin,
    label: resource.label,
  };
  const plan = planList(resource.style, input);
  if ('status' in plan) return styleAnswer(plan, call.label);
  const test = compileFilters(plan.filters);
  const parent = resource.params.length === 0 ? undefined : match.parent;
  const snapshot = plan.pages === undefined ? undefined : (plan.pages.snapshot ?? coll.lastSeq());
  return after(snapshot, (maxSeq) => {
    const pageQuery = {
      ...plan.query,
      ...(parent === undefined ? {} : { parent }),
      ...(test === undefined ? {} : { test }),
      ...(maxSeq === undefined ? {} : { maxSeq }),
    };
    return after(coll.page(pageQuery), (page) => {
      if (page === 'unknown-cursor')
        return styleAnswer(unknownCursor(resource.style, plan, resource.label), call.label);
      const body = listBody(resource.style, page, plan, apiPath(req.basePath, path));
      const pages = plan.pages;
      if (pages === undefined || maxSeq === undefined) return jsonAnswer(200, body, call.label);
      return after(
        coll.count({ ...(parent === undefined ? {} : { parent }), ...(test === undefined ? {} : { test }), maxSeq }),
        (total) => {
          const link = githubLink(input, req.query, pages, total, maxSeq);
          return jsonAnswer(200, body, call.label, link === undefined ? [] : ['link', link]);
        },
      );
    });
  });
}
