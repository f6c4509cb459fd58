// The Crawl tab: what a crawl is, as its config file said it and in words: its seeds (how many, the
// first ones, every one to download), link following, scope rules, the resolve map, and its settings
// with what differs from Scrapy's defaults set apart; "Duplicate and edit" opens the New crawl form filled from it.

import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { CrawlDefinition } from '../../../../shared/contract';
import { DEFAULT_SETTINGS, SETTINGS_SCHEMA, type Settings } from '../../../../shared/settings';
import type { ScopeRule } from '../../../../shared/types';
import { toAppError } from '../../transport/transport';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { sameSetting, settingLabel, valueWords } from '../setting-words';
import { configFileOf, downloadText, fetchAllSeeds } from './crawl-definition';

const FOLLOW_WORDS = {
  host: 'links to the seeds’ hosts',
  domain: 'links to the seeds’ registrable domains',
  any: 'every link',
  none: 'no links: the seeds only',
} as const;

/** A scope rule in words. */
export function ruleWords(r: ScopeRule): string {
  switch (r.by) {
    case 'domain': return 'each registrable domain is a scope';
    case 'host': return 'each host is a scope';
    case 'prefix': return `URLs starting with ${r.prefix} are the scope ${r.scope ?? r.prefix}`;
    case 'query': return `the URL in the “${r.param}” query parameter: its ${r.then ?? 'host'} is a scope`;
  }
}

export function CrawlView({ crawlId, onEditCopy }: { crawlId: number; onEditCopy: (crawlId: number) => void }) {
  const { transport } = useApp();
  const [def, setDef] = useState<CrawlDefinition | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [onlyChanged, setOnlyChanged] = useState(true);
  const [note, setNote] = useState<string | null>(null);

  useEffect(() => {
    let gone = false;
    transport.invoke('crawls.definition', { id: crawlId }).then(
      (d) => !gone && setDef(d),
      (e) => !gone && setError(toAppError(e).message),
    );
    return () => {
      gone = true;
    };
  }, [transport, crawlId]);

  const rows = useMemo(() => (def ? settingRows(def.settings) : []), [def]);
  const changed = rows.filter((r) => r.differs).length;
  if (error) return <p className="empty bad-text" role="alert">Loading the crawl’s definition failed: {error}</p>;
  if (!def) return <p className="empty" role="status">Loading the crawl’s definition…</p>;

  const downloadSeeds = async () => {
    setNote('Reading the seeds…');
    try {
      const seeds = await fetchAllSeeds(transport, crawlId);
      downloadText(`${fileStem(def.name)}-seeds.txt`, `${seeds.join('\n')}\n`);
      setNote(`Downloaded ${formatCount(seeds.length)} seeds.`);
    } catch (e) {
      setNote(`Reading the seeds failed: ${toAppError(e).message}`);
    }
  };
  const downloadConfig = async () => {
    try {
      const seeds = await fetchAllSeeds(transport, crawlId);
      downloadText(`${fileStem(def.name)}.json`, `${JSON.stringify(configFileOf(def, seeds), null, 2)}\n`);
      setNote('Downloaded the crawl config (slotscope crawl --config FILE runs it).');
    } catch (e) {
      setNote(`Reading the seeds failed: ${toAppError(e).message}`);
    }
  };
  const f = def.follow;
  const shown = onlyChanged ? rows.filter((r) => r.differs) : rows;

  return (
    <div className="crawl-view" data-testid="crawl-view">
      <div className="crawl-view-bar">
        <button type="button" className="btn btn-primary btn-small" onClick={() => onEditCopy(crawlId)} data-testid="duplicate-edit"
          title="The New crawl form filled from this crawl: change anything, then create the copy">
          Duplicate and edit…
        </button>
        <button type="button" className="btn btn-small" onClick={() => void downloadConfig()}>Download the config</button>
        {note && <span className="muted" role="status">{note}</span>}
      </div>
      <div className="crawl-view-body">
        {def.whatIf && (
          <Section title="What-if replay" testId="crawl-whatif">
            <p>
              Replays crawl {def.whatIf.from}’s recorded responses{def.whatIf.slot ? ` of slot ${def.whatIf.slot}` : ''} with{' '}
              {Object.keys(def.whatIf.settings).map((k) => `${settingLabel(k)} ${valueWords(k, def.whatIf!.settings[k])}`).join(', ') || 'its own settings'}.
            </p>
          </Section>
        )}
        <Section title={`Seeds · ${formatCount(def.seedCount)}`} testId="crawl-seeds">
          {def.seedCount === 0 ? (
            <p className="muted">None: {def.whatIf ? 'a what-if replay fetches nothing' : 'an imported log says what was fetched, not where the spider started'}.</p>
          ) : (
            <>
              <ol className="seed-list mono" data-testid="crawl-seed-list">
                {def.firstSeeds.map((s, i) => <li key={`${i}|${s}`}>{s}</li>)}
              </ol>
              <p className="muted">
                {def.seedCount > def.firstSeeds.length ? `The first ${def.firstSeeds.length} of ${formatCount(def.seedCount)}. ` : ''}
                <button type="button" className="link" onClick={() => void downloadSeeds()} data-testid="download-seeds">Download all {formatCount(def.seedCount)} seeds</button>
              </p>
            </>
          )}
        </Section>
        <Section title="Following links" testId="crawl-follow">
          <dl className="def-fields">
            <Field label="Follows">{FOLLOW_WORDS[f.scope]}</Field>
            <Field label="Max depth">{f.maxDepth === null ? 'no limit' : f.maxDepth}</Field>
            <Field label="Max pages">{f.maxPages === null ? 'no limit' : formatCount(f.maxPages)}</Field>
            <Field label="Only URLs matching">{f.include.length === 0 ? 'any' : <Patterns list={f.include} />}</Field>
            <Field label="Never URLs matching">{f.exclude.length === 0 ? 'none' : <Patterns list={f.exclude} />}</Field>
          </dl>
        </Section>
        <Section title="Scope rules" testId="crawl-scopes">
          {def.scopes.length === 0 ? <p className="muted">None: each request is throttled by its slot only.</p> : (
            <ol className="rule-list">{def.scopes.map((r, i) => <li key={i}>{ruleWords(r)}</li>)}</ol>
          )}
        </Section>
        <Section title="Resolve" testId="crawl-resolve">
          {Object.keys(def.resolve).length === 0 ? <p className="muted">None: host names are looked up as usual.</p> : (
            <table className="grid def-table">
              <thead><tr><th className="left">Host</th><th className="left">Connects to</th></tr></thead>
              <tbody>{Object.entries(def.resolve).map(([h, ip]) => <tr key={h}><td className="left mono">{h}</td><td className="left mono">{ip}</td></tr>)}</tbody>
            </table>
          )}
        </Section>
        <Section title={`Settings · ${changed} differ from Scrapy’s defaults`} testId="crawl-settings"
          aside={
            <label className="check">
              <input type="checkbox" checked={onlyChanged} onChange={(e) => setOnlyChanged(e.target.checked)} /> only those
            </label>
          }>
          <table className="grid def-table settings-def" data-testid="crawl-settings-table">
            <thead>
              <tr><th className="left">Setting</th><th className="left">Value</th><th className="left">Default</th></tr>
            </thead>
            <tbody>
              {shown.map((r) => (
                <tr key={r.name} className={r.differs ? 'differs' : undefined} data-setting={r.name} data-differs={r.differs ? 'true' : 'false'}>
                  <td className="left"><span className="setting-label">{r.label}</span> <code className="setting-name">{r.name}</code></td>
                  <td className="left def-value">{r.value}</td>
                  <td className="left muted def-value">{r.differs ? r.def : 'same'}</td>
                </tr>
              ))}
              {shown.length === 0 && <tr><td colSpan={3} className="left muted">Every setting is Scrapy’s default.</td></tr>}
            </tbody>
          </table>
        </Section>
      </div>
    </div>
  );
}

function Section({ title, testId, aside, children }: { title: string; testId: string; aside?: ReactNode; children: ReactNode }) {
  return (
    <section className="def-section" aria-label={title} data-testid={testId}>
      <div className="def-section-head">
        <h3>{title}</h3>
        {aside}
      </div>
      {children}
    </section>
  );
}

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

function Patterns({ list }: { list: readonly string[] }) {
  return <ul className="pattern-list">{list.map((p) => <li key={p}><code>{p}</code></li>)}</ul>;
}

interface SettingRow {
  readonly name: string;
  readonly label: string;
  readonly value: string;
  readonly def: string;
  readonly differs: boolean;
}

function settingRows(s: Settings): SettingRow[] {
  return SETTINGS_SCHEMA.map((spec) => {
    const v = s[spec.name];
    const d = DEFAULT_SETTINGS[spec.name];
    return { name: spec.name, label: settingLabel(spec.name), value: valueWords(spec.name, v), def: valueWords(spec.name, d), differs: !sameSetting(v, d) };
  });
}

/** A file name from a crawl's name: letters, digits and dashes. */
export function fileStem(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'crawl';
}
