// The query strings of the browser host's routes (/export, /import): unknown and repeated
// parameters refused, and every refusal worded the same way, naming the parameter.

/** A bad query: `field: "value" is not allowed (what is)`, or `field: missing (what is)`. */
export class BadQuery extends Error {
  constructor(readonly field: string, value: string | null, allowed: string) {
    super(`${field}: ${value === null ? 'missing' : `${JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value)} is not allowed`} (${allowed})`);
  }
}

/** The parameters of `raw` (the text after `?`); throws BadQuery for one not in `known` or given twice. */
export function readQuery(raw: string, known: readonly string[], path: string): URLSearchParams {
  const q = new URLSearchParams(raw);
  for (const k of q.keys()) if (!known.includes(k)) throw new BadQuery(k, q.get(k), `not a parameter of ${path}; known: ${known.join(', ')}`);
  for (const k of known) if (q.getAll(k).length > 1) throw new BadQuery(k, q.getAll(k).join(','), 'one value');
  return q;
}
