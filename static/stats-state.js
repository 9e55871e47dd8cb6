// What the stats view's modules share: the view shown, its figures, and the page of its latest
// visits. One object, so each module reads what the others last wrote.

export const state = {
  view: null,
  /** The stats shown, and how many requests were sent (an older answer arriving late is dropped). */
  stats: null,
  asked: 0,
  visitsOffset: 0,
  visitsShown: { offset: 0, count: 0, total: 0 },
  /** The titles of the dashboard's top links by code (null: none), read once per opening of the dashboard. */
  titles: new Map(),
  /** The Stats link that opened the view: the focus goes back to it. */
  opener: null,
};
