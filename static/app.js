// The web UI (docs/ui.md): plain DOM, no framework, no request leaves the origin. This module only
// starts the parts of the page, each in its own module: the gate, shorten, look up, your links,
// export and import, and the stats, the keys, the domains and the webhooks once the gate has answered.

import { startDomains } from './domains.js';
import { checkGate, startGate } from './gate.js';
import { startKeys } from './keys.js';
import { startLinks } from './links.js';
import { startLookup } from './lookup.js';
import { startShorten } from './shorten.js';
import { startStats } from './stats.js';
import { startTransfer } from './transfer.js';
import { startWebhooks } from './webhooks.js';

startGate();
startShorten();
startLookup();
startLinks();
startTransfer();
// The keys, the domains and the webhooks after the stats: all follow the fragment, and the keys',
// domains' and webhooks' views hide the home view the stats show for every fragment not theirs.
void checkGate().then(() => {
  startStats();
  startKeys();
  startDomains();
  startWebhooks();
});
