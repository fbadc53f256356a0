/** RFC 1123 label: what Kubernetes requires of most object names, and a subset of what SageMaker accepts. */
const RFC1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const MAX_LABEL_LENGTH = 63;

/** Why `name` is not an RFC 1123 label, or undefined when it is one. */
export function rfc1123LabelProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_LABEL_LENGTH) return `is ${name.length} characters long; at most ${MAX_LABEL_LENGTH} are allowed`;
  if (!RFC1123_LABEL.test(name)) {
    return 'must be an RFC 1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit';
  }
  return undefined;
}

/** The items that occur more than once, each reported once. */
export function duplicates<T>(items: readonly T[]): T[] {
  const seen = new Set<T>();
  const repeated = new Set<T>();
  for (const item of items) (seen.has(item) ? repeated : seen).add(item);
  return [...repeated];
}
