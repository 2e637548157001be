import { ControlError } from '../control/control-error.js';
import type { Delivery } from './log.js';

/** Thrown by `webhooks.waitFor` when too few deliveries matched in time; `deliveries` are those that did (the admin API answers 408 with them). */
export class DeliveryWaitTimeout extends ControlError {
  constructor(
    message: string,
    readonly deliveries: Delivery[],
  ) {
    super(408, 'timeout', message);
    this.name = 'DeliveryWaitTimeout';
  }
}
