/** The items that occur more than once, each reported once. */
export function duplicates<T>(items: readonly T[]): T[] {
  const seen = new Set<T>();
  const repeated = new Set<T>();
  for (const item of items) (seen.has(item) ? repeated : seen).add(item);
  return [...repeated];
}

/** Items as a message lists them: each single-quoted, comma-separated. */
export function quoted(items: readonly string[]): string {
  return items.map((i) => `'${i}'`).join(', ');
}
