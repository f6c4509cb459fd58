// How deep a parsed JSON value nests, measured without recursion: a config file or a request
// nested 200,000 levels deep is refused by name before anything walks it recursively.

/**
 * Deepest nesting any input Slotscope reads may have (config files, scenarios, requests). A real
 * crawl config nests about six levels (THROTTLING_SCOPES → scope → backoff → http_codes).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests deeper than `max` levels (a scalar is level 0, `[]` and `{}` level 1). An
 * object met twice (a shared or cyclic reference, possible only outside JSON) is looked at once.
 */
export function nestedDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const seen = new Set<object>();
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    if (seen.has(v)) continue;
    seen.add(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** "nested deeper than 64 levels": the words of a refusal. */
export const TOO_DEEP = `nested at most ${MAX_JSON_DEPTH} levels deep`;
