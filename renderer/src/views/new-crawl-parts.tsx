// Parts of the New crawl form for what a config file can say beyond names and numbers: URL patterns
// to follow or skip (checked as typed), the scope rules in order, and THROTTLING_SCOPES as a small
// table (one scope a row; what the columns do not hold stays as JSON in its row).

import type { ScopeRule } from '../../../shared/types';
import { EMPTY_SCOPE_ROW, type RuleDraft, type ScopeRowDraft } from './crawl-view/crawl-definition';

/** Regular expressions one a line: the bad ones named by line, with why. */
export function checkPatterns(text: string, what: string): { readonly list: string[]; readonly error: string | null } {
  const list: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    try {
      new RegExp(line);
      list.push(line);
    } catch (e) {
      return { list, error: `${what}, line ${i + 1}: ${line} is not a regular expression (${e instanceof Error ? e.message.replace(/^Invalid regular expression: /, '') : String(e)})` };
    }
  }
  return { list, error: null };
}

const RULE_WORDS: Readonly<Record<ScopeRule['by'], string>> = {
  domain: 'each registrable domain',
  host: 'each host',
  prefix: 'a URL prefix',
  query: 'the URL in a query parameter',
};

/** The scope rules, in order: add, change, remove. */
export function RulesEditor({ rules, onChange }: { rules: readonly RuleDraft[]; onChange: (rules: readonly RuleDraft[]) => void }) {
  const set = (i: number, r: Partial<RuleDraft>) => onChange(rules.map((x, j) => (j === i ? { ...x, ...r } : x)));
  return (
    <fieldset className="form-fieldset" data-testid="scope-rules">
      <legend className="field-label">Scope rules <span className="muted">(besides its slot, a request is also throttled by the scopes these give it, in order)</span></legend>
      {rules.length === 0 && <p className="muted field-note">None.</p>}
      {rules.map((r, i) => (
        <div key={i} className="rule-row" data-rule={i}>
          <select className="input" value={r.by} aria-label={`Scope rule ${i + 1}: by`} onChange={(e) => set(i, { by: e.target.value as ScopeRule['by'], arg: '', name: '' })}>
            {(Object.keys(RULE_WORDS) as ScopeRule['by'][]).map((b) => <option key={b} value={b}>{RULE_WORDS[b]}</option>)}
          </select>
          {r.by === 'prefix' && (
            <>
              <input className="input mono" value={r.arg} placeholder="https://api.example.com/v1/" aria-label={`Scope rule ${i + 1}: URL prefix`} onChange={(e) => set(i, { arg: e.target.value })} />
              <input className="input" value={r.name} placeholder="scope name (optional)" aria-label={`Scope rule ${i + 1}: scope name`} onChange={(e) => set(i, { name: e.target.value })} />
            </>
          )}
          {r.by === 'query' && (
            <>
              <input className="input mono" value={r.arg} placeholder="url" aria-label={`Scope rule ${i + 1}: query parameter`} onChange={(e) => set(i, { arg: e.target.value })} />
              <select className="input" value={r.name || 'host'} aria-label={`Scope rule ${i + 1}: its target's`} onChange={(e) => set(i, { name: e.target.value })}>
                <option value="host">its host</option>
                <option value="domain">its domain</option>
              </select>
            </>
          )}
          <button type="button" className="btn btn-small" onClick={() => onChange(rules.filter((_, j) => j !== i))} aria-label={`Remove scope rule ${i + 1}`}>Remove</button>
        </div>
      ))}
      <button type="button" className="btn btn-small" onClick={() => onChange([...rules, { by: 'domain', arg: '', name: '' }])}>Add a rule</button>
    </fieldset>
  );
}

/** THROTTLING_SCOPES, one scope a row. */
export function ScopesTable({ rows, onChange, error }: { rows: readonly ScopeRowDraft[]; onChange: (rows: readonly ScopeRowDraft[]) => void; error: string | null }) {
  const set = (i: number, r: Partial<ScopeRowDraft>) => onChange(rows.map((x, j) => (j === i ? { ...x, ...r } : x)));
  const text = (i: number, field: keyof ScopeRowDraft, label: string, placeholder: string, cls = '') => (
    <td className={cls}>
      <input className={`input${field === 'key' || field === 'more' ? ' mono' : ''}`} value={rows[i][field] as string} placeholder={placeholder}
        aria-label={`${label}, scope ${i + 1}`} onChange={(e) => set(i, { [field]: e.target.value } as Partial<ScopeRowDraft>)} />
    </td>
  );
  const toggle = (i: number, field: 'rampup' | 'ignoreRobots', label: string) => (
    <td className="center">
      <input type="checkbox" role="switch" className="switch" checked={rows[i][field]} aria-checked={rows[i][field]} aria-label={`${label}, scope ${i + 1}`}
        onChange={(e) => set(i, { [field]: e.target.checked } as Partial<ScopeRowDraft>)} />
    </td>
  );
  return (
    <fieldset className="form-fieldset" data-testid="scopes-table">
      <legend className="field-label">Throttling scopes <code className="setting-name">THROTTLING_SCOPES</code></legend>
      <p className="field-note muted">A host, a slot or a scope name, and what it may do: empty cells keep the crawl’s settings. Backoff, jitter and the rest go in “more” as JSON.</p>
      {rows.length > 0 && (
        <div className="table-scroll scopes-scroll">
          <table className="grid scopes-edit">
            <thead>
              <tr>
                <th className="left">Scope</th>
                <th className="left" title="Requests in flight at once">Concurrency</th>
                <th className="left" title="Seconds between request starts (AutoThrottle's floor)">Delay (s)</th>
                <th className="left" title="AutoThrottle's target concurrency for this scope">Target</th>
                <th className="left" title="Cost units per window">Quota</th>
                <th className="left" title="Quota window, seconds">Window (s)</th>
                <th className="center" title="Rampup instead of stepwise recovery">Rampup</th>
                <th className="center" title="Ignore robots.txt Crawl-delay">Ignore robots</th>
                <th className="left">More (JSON)</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {rows.map((_, i) => (
                <tr key={i} data-scope-row={i}>
                  {text(i, 'key', 'Scope', 'api.example.com', 'scope-key')}
                  {text(i, 'concurrency', 'Concurrency', '')}
                  {text(i, 'delay', 'Delay, seconds', '')}
                  {text(i, 'target', 'AutoThrottle target', '')}
                  {text(i, 'quota', 'Quota', '')}
                  {text(i, 'window', 'Quota window, seconds', '')}
                  {toggle(i, 'rampup', 'Rampup')}
                  {toggle(i, 'ignoreRobots', 'Ignore robots.txt Crawl-delay')}
                  {text(i, 'more', 'More settings as JSON', '{"backoff": {"max_delay": 60}}', 'scope-more')}
                  <td><button type="button" className="btn btn-small" onClick={() => onChange(rows.filter((__, j) => j !== i))} aria-label={`Remove scope ${i + 1}`}>Remove</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <button type="button" className="btn btn-small" onClick={() => onChange([...rows, EMPTY_SCOPE_ROW])}>Add a scope</button>
      {error && <div className="field-error" role="alert" data-testid="scopes-error">{error}</div>}
    </fieldset>
  );
}
