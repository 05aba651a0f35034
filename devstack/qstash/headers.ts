/** Header names as QStash shows them (Go's canonical form), since fetch lowercases them. */
export function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((part) => (part ? part[0]!.toUpperCase() + part.slice(1) : part))
    .join('-');
}

/** A Headers object as QStash's `header` fields have it: canonical names, each with a list of values. */
export function headerLists(headers: Headers): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  headers.forEach((value, name) => {
    const key = canonicalHeaderName(name);
    out[key] = [...(out[key] ?? []), value];
  });
  return out;
}

export function asLists(headers: Record<string, string>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
}
