/**
 * What an event says (docs/webhooks.md), given to the store, which writes it with the change: a
 * link's record as the API shows it, and for a visit the link's code and domain and the visit's
 * event, field by field (`clickedData`), so nothing more than the event holds is ever sent.
 */
import type { Domains } from '../links/domains.ts';
import { recordView } from '../links/record.ts';
import type { WebhookBodies } from '../store/webhook-store.ts';
import { clickedData } from './events.ts';

export function webhookBodies(domains: Domains): WebhookBodies {
  return {
    link: (record) => JSON.stringify(recordView(record, domains)),
    clicked: (key, domain, visit) => JSON.stringify(clickedData(domains.codeOf(key), domain, visit)),
  };
}
