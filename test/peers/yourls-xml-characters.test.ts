/**
 * Regression (issue 43): YOURLS' XML (`format=xml`, its default) is well-formed whatever a title
 * holds. A title is kept as sent, and may hold characters XML 1.0 forbids even as a reference
 * (U+FFFE, U+FFFF, C0 controls); written into the document they made it unreadable, and one such
 * title broke `action=stats` for every client. The writer drops them now; the tests read every
 * answer with a reader that refuses them (test/support/xml.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phpXml, xmlText } from '../../src/peers/yourls/output.ts';
import { start } from '../support/helpers.ts';
import { api } from '../support/yourls.ts';
import { readXml } from '../support/xml.ts';

const KEY = 'k1';
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NOW = Date.UTC(2030, 3, 4, 5, 6, 7);
const DATE = '2030-04-04 05:06:07';

/** Characters XML 1.0 forbids in a document, written or referenced (joined, the two surrogates stay lone: low before high). */
const FORBIDDEN = ['\u0000', '\u0001', '\u0008', '\u000b', '\u000c', '\u000e', '\u001f', '\udfff', '\ud800', '\ufffe', '\uffff'];

test('the test reader is strict: a forbidden character, written or referenced, makes a document unreadable', () => {
  assert.deepEqual(readXml(`${DECLARATION}<root><t>a&#13;\t\n\u{1f600}\ufffd\ue000&#x1F600;</t></root>\n`), [
    'root',
    [['t', 'a\r\t\n\u{1f600}\ufffd\ue000\u{1f600}']],
  ]);
  for (const c of FORBIDDEN) {
    const hex = c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    assert.throws(() => readXml(`${DECLARATION}<root><t>a${c}b</t></root>\n`), new RegExp(`U\\+${hex} is no XML character`), `written U+${hex}`);
    assert.throws(() => readXml(`${DECLARATION}<root><t>a&#x${hex};b</t></root>\n`), new RegExp(`U\\+${hex} is no XML character`), `referenced U+${hex}`);
  }
});

test('xml text drops every character XML 1.0 forbids (and tab and DEL, as YOURLS); a surrogate pair and U+FFFD stay', () => {
  for (const c of FORBIDDEN) assert.equal(xmlText(`a${c}b`), 'ab', `U+${c.charCodeAt(0).toString(16)}`);
  assert.equal(xmlText('\ufffea\uffff\ud83d\ude00\ufffd\u{10fffd}\ud800\u0000b'), 'a\ud83d\ude00\ufffd\u{10fffd}b');
  const doc = phpXml({ title: `x${FORBIDDEN.join('')}y`, nested: { t: '\ufffe\uffff' } });
  assert.equal(doc, `${DECLARATION}<root><title>xy</title><nested><t/></nested></root>\n`);
  assert.deepEqual(readXml(doc), [
    'root',
    [
      ['title', 'xy'],
      ['nested', [['t', '']]],
    ],
  ]);
});

test('a title holding U+FFFE, U+FFFF or a control character: stats, expand, url-stats and shorturl answer well-formed XML', async (t) => {
  const h = await start(t, { yourlsApi: true, apiKeys: [KEY], now: () => NOW, logLevel: 'warn' });
  const base = h.shortener.config.baseUrl;
  const titles: [code: string, title: string, shown: string][] = [
    ['nonch1', 'Sale\ufffe now', 'Sale now'],
    ['nonch2', '\uffffPrices\u0001', 'Prices'],
  ];
  for (const [code, title] of titles) {
    const r = await h.req('/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `https://example.com/${code}`, code, title }),
    });
    assert.equal(r.status, 201, r.body);
  }
  // Through YOURLS itself too: its `title` parameter keeps U+FFFF.
  const added = await api(h, { signature: KEY, action: 'shorturl', url: 'https://example.com/nonch3', keyword: 'nonch3', title: 'Deal\uffff!', format: 'xml' });
  assert.equal(added.status, 200, added.body);
  assert.equal(added.headers['content-type'], 'application/xml; charset=utf-8');
  assert.deepEqual(readXml(added.body), [
    'root',
    [
      ['status', 'success'],
      ['code', ''],
      ['message', 'https://example.com/nonch3 added to database'],
      ['errorCode', ''],
      ['statusCode', '200'],
      [
        'url',
        [
          ['keyword', 'nonch3'],
          ['url', 'https://example.com/nonch3'],
          ['title', 'Deal!'],
          ['date', DATE],
          ['ip', ''],
        ],
      ],
      ['title', 'Deal!'],
      ['shorturl', `${base}/nonch3`],
    ],
  ]);
  titles.push(['nonch3', 'Deal\uffff!', 'Deal!']);

  const stats = await api(h, { signature: KEY, action: 'stats', filter: 'last', limit: '10' });
  assert.equal(stats.status, 200, stats.body);
  assert.equal(stats.headers['content-type'], 'application/xml; charset=utf-8');
  const link = (code: string, shown: string): [string, [string, string][]] => [
    'link',
    [
      ['shorturl', `${base}/${code}`],
      ['url', `https://example.com/${code}`],
      ['title', shown],
      ['timestamp', DATE],
      ['ip', ''],
      ['clicks', '0'],
    ],
  ];
  // Newest first; the three were made in the same second, so the last made comes first.
  const listed = [...titles].reverse().map(([code, , shown], i): [string, [string, string][]] => [`link_${i + 1}`, link(code, shown)[1]]);
  assert.deepEqual(readXml(stats.body), [
    'root',
    [
      ['links', listed],
      [
        'stats',
        [
          ['total_links', '3'],
          ['total_clicks', '0'],
        ],
      ],
      ['statusCode', '200'],
      ['message', 'success'],
    ],
  ]);

  for (const [code, , shown] of titles) {
    const expand = await api(h, { signature: KEY, action: 'expand', shorturl: code });
    assert.equal(expand.status, 200, expand.body);
    assert.equal(
      expand.body,
      `${DECLARATION}<root><keyword>${code}</keyword><shorturl>${base}/${code}</shorturl><longurl>https://example.com/${code}</longurl><title>${shown}</title><message>success</message><statusCode>200</statusCode></root>\n`,
    );
    assert.deepEqual(readXml(expand.body)[1].at(3), ['title', shown]);
    const urlStats = await api(h, { signature: KEY, action: 'url-stats', shorturl: code });
    assert.equal(urlStats.status, 200, urlStats.body);
    assert.deepEqual(readXml(urlStats.body), ['root', [['statusCode', '200'], ['message', 'success'], link(code, shown)]]);
  }
});
