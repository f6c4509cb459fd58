// robots.txt per origin (SPEC 3 rule 6): fetched once through the same throttle, parsed with
// robots-parser, with RFC 9309 failure handling: 4xx allows all, 5xx/network is retried.

import robotsParser from 'robots-parser';

export type RobotsRules = ReturnType<typeof robotsParser>;

export type RobotsState =
  | { readonly kind: 'fetching'; readonly attempts: number }
  | { readonly kind: 'ready'; readonly rules: RobotsRules | null; readonly note: string };

/** Rule lines (allow, disallow, crawl-delay) above which only the groups of the crawl's agent and `*` are kept. */
const MANY_RULES = 5000;
/** A line robots-parser reads: a key before a colon, no `#` before it (everything after `#` is a comment). */
const DIRECTIVE = /^([^:#\r\n]*):([^#\r\n]*)/gm;

/** robots-parser's form of a user agent: lower case, up to its first `/`, trimmed. */
function agentToken(agent: string): string {
  const a = agent.toLowerCase();
  const slash = a.indexOf('/');
  return (slash < 0 ? a : a.slice(0, slash)).trim();
}

/**
 * The lines of a robots.txt that robots-parser acts on, in order: blank lines, comments and lines
 * without a key go (robots-parser skips them; half a megabyte of newlines took it 115 ms in one
 * blocking call). With more than MANY_RULES rule lines, the rules of groups that apply neither to
 * `userAgent` nor to `*` go too (they cost the parse and never decide for this crawl).
 */
export function compactRobots(body: string, userAgent?: string): string {
  const lines: { key: string; line: string }[] = [];
  let rules = 0;
  for (const m of body.matchAll(DIRECTIVE)) {
    const key = m[1].trim().toLowerCase();
    if (key === '') continue;
    if (key === 'allow' || key === 'disallow' || key === 'crawl-delay') rules++;
    lines.push({ key, line: `${key}:${m[2]}` });
  }
  if (rules <= MANY_RULES || userAgent === undefined) return lines.map((l) => l.line).join('\n');
  // robots-parser's grouping: consecutive user-agent lines name one group; any other line ends the run.
  const mine = agentToken(userAgent);
  const out: string[] = [];
  let agents: string[] = [];
  let afterOther = true;
  for (const { key, line } of lines) {
    if (key === 'user-agent') {
      if (afterOther) agents = [];
      agents.push(agentToken(line.slice(line.indexOf(':') + 1)));
      afterOther = false;
      out.push(line);
      continue;
    }
    afterOther = true;
    const rule = key === 'allow' || key === 'disallow' || key === 'crawl-delay';
    if (!rule || agents.includes(mine) || agents.includes('*')) out.push(line);
  }
  return out.join('\n');
}

/** Parses a robots.txt body for `origin` (compacted first: see compactRobots). */
export function parseRobots(origin: string, body: string, userAgent?: string): RobotsRules {
  return robotsParser(`${origin}/robots.txt`, compactRobots(body, userAgent));
}

/** What a robots.txt answer means (RFC 9309 2.3.1). */
export function robotsOutcome(status: number | null): 'parse' | 'allow-all' | 'retry' {
  if (status === null || status >= 500) return 'retry';
  if (status >= 400) return 'allow-all';
  if (status >= 200 && status < 300) return 'parse';
  return 'allow-all';
}

/** Whether `url` may be fetched; null rules allow all. */
export function robotsAllows(rules: RobotsRules | null, url: string, userAgent: string): boolean {
  if (!rules) return true;
  return rules.isAllowed(url, userAgent) !== false;
}
