import type { Config, EndpointConfig } from '../config/types.js';
import type { EndpointValidation } from '../validate/step.js';
import { StubInvalidError } from './stub-error.js';

/**
 * A stub's request validation against the served config's OpenAPI description (`openapi.spec`):
 * made as a config endpoint's is, so a stub that names an operation with `openapi:` (or whose
 * method and path are the description's) reports or enforces violations like the endpoint it
 * stands in for. Undefined without a description, or when the stub is not validated. Rejects with
 * {@link StubInvalidError} (a 400 `invalid_stub` at `/endpoint/openapi`) when the stub names an
 * operation the description lacks. The description and ajv load only for a config that has one.
 */
export async function stubValidation(
  config: Config,
  endpoint: EndpointConfig,
): Promise<EndpointValidation | undefined> {
  if (config.openapi === undefined) return undefined;
  const { validationFor } = await import('../validate/step.js');
  const made = await validationFor(config, endpoint);
  if ('validation' in made) return made.validation;
  throw new StubInvalidError([
    {
      path: made.field === undefined ? '/endpoint' : `/endpoint/${made.field}`,
      message: `endpoint${made.field === undefined ? '' : `.${made.field}`} ${made.problem}`,
    },
  ]);
}
