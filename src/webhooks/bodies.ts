/**
 * What an event says (docs/webhooks.md), given to the store, which writes it with the change: a
 * link's record as the API shows it, and for a visit the link's code and domain and the visit's
 * event, field by field (`clickedData`), so nothing more than the event holds is ever sent.
 */
import type { Domains } from '../links/domains.ts';
import { recordView } from '../links/record.ts';
import type { WebhookBodies } from '../store/webhook-store.ts';

export function webhookBodies(domains: Domains): WebhookBodies {
  return {
    link: (record) => JSON.stringify(recordView(record, domains)),
    // `clickedData`, written out as its JSON (test/webhooks/events.test.ts holds them equal): a busy
    // link's flush makes thousands a second, and the object and its serialization were a third of
    // a click's row.
    clicked: (key, domain, visit) => {
      const { time, referrer, country, browser, os, device, bot } = visit;
      return (
        `{"short_code":${JSON.stringify(domains.codeOf(key))},"domain":${text(domain)},"visit":{"time":${time},"referrer":${text(referrer)},` +
        `"country":${text(country)},"browser":${text(browser)},"os":${text(os)},"device":${text(device)},"bot":${bot}}}`
      );
    },
  };
}

const text = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));
