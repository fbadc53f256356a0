/** The items that occur more than once, each reported once. */
export function duplicates<T>(items: readonly T[]): T[] {
  const seen = new Set<T>();
  const repeated = new Set<T>();
  for (const item of items) (seen.has(item) ? repeated : seen).add(item);
  return [...repeated];
}
