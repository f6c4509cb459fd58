// The "New crawl" form: name, seeds (typed, or loaded from a file; bad lines named by number before
// and after Create), follow rules with URL patterns, scope rules, a preset that fills its values, every
// setting (booleans as switches, THROTTLING_SCOPES as a table) checked with shared applySettings as typed;
// or all of it filled from a crawl, to create an edited copy before it starts.

import { useCallback, useEffect, useMemo, useState } from 'react';
import type { AppError, SeedLineErrorWire } from '../../../shared/contract';
import { applySettings, DEFAULT_SETTINGS, PRESETS } from '../../../shared/settings';
import { FOLLOW_SCOPES } from '../../../shared/types';
import { toAppError } from '../transport/transport';
import { fetchAllSeeds, prefillOf, rulesFromDrafts, SEED_PREFILL_MAX, scopesFromRows, type FormPrefill, type RuleDraft, type ScopeRowDraft } from './crawl-view/crawl-definition';
import { checkPatterns, RulesEditor, ScopesTable } from './new-crawl-parts';
import { showValue } from './setting-value';
import type { SchemaStore } from '../store/app-state';
import { useStore } from '../store/use-store';
import { OFFLINE_TITLE, useHostOnline } from '../components/connection-notice';
import { useApp } from './app-context';
import { checkDrafts, EverySetting, type SettingDrafts } from './new-crawl-settings';

const schemaOf = (s: SchemaStore) => s.current();
/** Settings with an editor of their own above the list of every setting. */
const SKIPPED: ReadonlySet<string> = new Set(['THROTTLING_SCOPES']);

const SCOPES = FOLLOW_SCOPES;
/** Bad seed lines listed under the box; the count says how many more. */
const SHOWN_PROBLEMS = 50;
/** The browser host's WebSocket takes messages up to 1 MiB; a seed file must fit in one, with room to spare. */
const MAX_SEED_FILE_BYTES = 900_000;

/** A seed line the form can already tell is not an http(s) URL: its 1-based number and why. */
export interface SeedProblem {
  readonly line: number;
  readonly text: string;
  readonly message: string;
}

/** Checks each non-empty line with `new URL`, http and https only. */
export function checkSeedLines(text: string): { readonly good: number; readonly problems: readonly SeedProblem[] } {
  let good = 0;
  const problems: SeedProblem[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    try {
      const u = new URL(line);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') problems.push({ line: i + 1, text: line, message: `${u.protocol} is not http or https` });
      else good++;
    } catch {
      problems.push({ line: i + 1, text: line, message: 'not a URL' });
    }
  });
  return { good, problems };
}

type JsonCheck = { readonly value: Record<string, unknown> | undefined; readonly error: string | null };

function parseObject(text: string, what: string): JsonCheck {
  if (text.trim() === '') return { value: undefined, error: null };
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { value: undefined, error: `${what}: a JSON object is needed` };
    return { value: v as Record<string, unknown>, error: null };
  } catch (e) {
    return { value: undefined, error: `${what}: not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
}

function limitOf(text: string, what: string): { readonly value: number | undefined; readonly error: string | null } {
  const t = text.trim();
  if (t === '') return { value: undefined, error: null };
  const n = Number(t);
  if (!Number.isInteger(n) || n < 0) return { value: undefined, error: `${what}: a whole number >= 0, or empty for no limit` };
  return { value: n, error: null };
}

interface Created {
  readonly id: number;
  readonly name: string;
  readonly seedErrors: readonly SeedLineErrorWire[];
}

/** Reads a crawl's definition (and its seeds, when there are not too many) into the form's starting values. */
function usePrefill(from: number | undefined): { readonly prefill: FormPrefill | null; readonly error: string | null; readonly loading: boolean } {
  const { transport } = useApp();
  const [state, setState] = useState<{ prefill: FormPrefill | null; error: string | null }>({ prefill: null, error: null });
  useEffect(() => {
    if (from === undefined) return;
    let gone = false;
    (async () => {
      const def = await transport.invoke('crawls.definition', { id: from });
      const seeds = def.seedCount <= SEED_PREFILL_MAX ? await fetchAllSeeds(transport, from) : null;
      if (!gone) setState({ prefill: prefillOf(def, seeds), error: null });
    })().catch((e) => {
      if (!gone) setState({ prefill: null, error: toAppError(e).message });
    });
    return () => {
      gone = true;
    };
  }, [transport, from]);
  return { ...state, loading: from !== undefined && state.prefill === null && state.error === null };
}

export function NewCrawlForm({ onCancel, onOpen, from }: { onCancel: () => void; onOpen: (crawlId: number) => void; from?: number }) {
  const filled = usePrefill(from);
  if (from !== undefined && filled.prefill === null) {
    return (
      <section className="panel new-crawl" aria-labelledby="new-crawl-title" data-testid="new-crawl-form" data-from={from}>
        <div className="panel-head">
          <h2 id="new-crawl-title">New crawl from crawl {from}</h2>
        </div>
        {filled.error ? (
          <div className="empty">
            <p className="bad-text" role="alert">Reading crawl {from} failed: {filled.error}</p>
            <button type="button" className="btn" onClick={onCancel}>Close</button>
          </div>
        ) : <p className="empty" role="status">Filling the form from crawl {from}…</p>}
      </section>
    );
  }
  return <CrawlForm onCancel={onCancel} onOpen={onOpen} prefill={filled.prefill} from={from} />;
}

function CrawlForm({ onCancel, onOpen, prefill, from }: { onCancel: () => void; onOpen: (crawlId: number) => void; prefill: FormPrefill | null; from?: number }) {
  const { commands, transport, stores } = useApp();
  const [name, setName] = useState(prefill?.name ?? '');
  const [seeds, setSeeds] = useState(prefill?.seeds ?? '');
  // A copy's long seed list stays on the host (crawls.create seedsFrom); what is typed here adds to it.
  const [seedsFrom, setSeedsFrom] = useState(prefill?.seedsFrom ?? null);
  const [scope, setScope] = useState<(typeof SCOPES)[number]>(prefill?.scope ?? 'host');
  const [maxDepth, setMaxDepth] = useState(prefill?.maxDepth ?? '');
  const [maxPages, setMaxPages] = useState(prefill?.maxPages ?? '');
  const [include, setInclude] = useState(prefill?.include ?? '');
  const [exclude, setExclude] = useState(prefill?.exclude ?? '');
  const [rules, setRules] = useState<readonly RuleDraft[]>(prefill?.rules ?? []);
  const [scopeRows, setScopeRows] = useState<readonly ScopeRowDraft[]>(prefill?.scopes ?? []);
  const [presetId, setPresetId] = useState('');
  const [advanced, setAdvanced] = useState('');
  const [drafts, setDrafts] = useState<SettingDrafts>(prefill?.drafts ?? {});
  const schema = useStore(stores.schema, schemaOf);
  const [resolve, setResolve] = useState(prefill?.resolve ?? '');
  const [busy, setBusy] = useState(false);
  const [hostError, setHostError] = useState<AppError | null>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const online = useHostOnline();

  const [seedFile, setSeedFile] = useState<{ readonly text: string; readonly error: boolean } | null>(null);

  /** Reads a seed file into the seeds box (its lines keep their numbers, so bad ones are named as in the file). */
  const loadSeedFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    input.value = ''; // the same file can be chosen again after an edit
    if (!file) return;
    if (transport.kind === 'websocket' && file.size > MAX_SEED_FILE_BYTES) {
      setSeedFile({ error: true, text: `${file.name} is ${(file.size / 1e6).toFixed(1)} MB: the browser host takes seed files up to ${MAX_SEED_FILE_BYTES / 1000} KB (use \`slotscope crawl --seeds FILE\` for larger lists).` });
      return;
    }
    try {
      const text = (await file.text()).replace(/\r\n?/g, '\n');
      setSeeds(text);
      const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      setSeedFile({ error: false, text: `Loaded ${lines} line${lines === 1 ? '' : 's'} from ${file.name}` });
    } catch (e) {
      setSeedFile({ error: true, text: `Could not read ${file.name}: ${e instanceof Error ? e.message : String(e)}` });
    }
  };

  const preset = PRESETS.find((p) => p.id === presetId);
  /** A preset fills its values into the fields (replacing those the previous preset filled and nobody changed since). */
  const choosePreset = (id: string) => {
    const before = PRESETS.find((p) => p.id === presetId);
    const next = PRESETS.find((p) => p.id === id);
    setDrafts((d) => {
      const out: Record<string, string> = { ...d };
      for (const [k, v] of Object.entries(before?.settings ?? {})) if (out[k] === showValue(v)) delete out[k];
      for (const [k, v] of Object.entries(next?.settings ?? {})) out[k] = showValue(v);
      return out;
    });
    setPresetId(id);
  };
  const seedCheck = useMemo(() => checkSeedLines(seeds), [seeds]);
  const includeCheck = useMemo(() => checkPatterns(include, 'Only URLs matching'), [include]);
  const excludeCheck = useMemo(() => checkPatterns(exclude, 'Never URLs matching'), [exclude]);
  const scopesCheck = useMemo(() => scopesFromRows(scopeRows), [scopeRows]);
  const depth = limitOf(maxDepth, 'Max depth');
  const pages = limitOf(maxPages, 'Max pages');
  const resolveCheck = parseObject(resolve, 'Resolve');
  // The preset over the defaults: what each field of "every setting" starts from.
  const base = useMemo(() => {
    const r = applySettings(preset?.settings ?? {});
    return r.ok ? r.settings : DEFAULT_SETTINGS;
  }, [preset]);
  const draftCheck = useMemo(() => checkDrafts(schema, drafts, base), [schema, drafts, base]);
  const onDraft = useCallback((name: string, text: string | null) => setDrafts((d) => {
    const next = { ...d };
    if (text === null) delete next[name];
    else next[name] = text;
    return next;
  }), []);
  const settingsCheck = useMemo(() => {
    const extra = parseObject(advanced, 'Advanced settings');
    if (extra.error) return { value: undefined, error: extra.error };
    const table = scopeRows.length > 0 ? { THROTTLING_SCOPES: scopesCheck.value } : {};
    const merged = { ...(preset?.settings ?? {}), ...draftCheck.values, ...table, ...(extra.value ?? {}) };
    const r = applySettings(merged);
    if (!r.ok) return { value: undefined, error: r.errors.map((e) => e.message).join('\n') };
    return { value: merged, error: null };
  }, [advanced, preset, draftCheck, scopeRows, scopesCheck]);
  const refused = Object.keys(draftCheck.errors);

  const blocking = [
    name.trim() === '' ? 'Give the crawl a name.' : null,
    seedCheck.good === 0 && seedsFrom === null ? 'Give at least one http(s) seed URL.' : null,
    depth.error, pages.error, includeCheck.error, excludeCheck.error, scopesCheck.error, resolveCheck.error, settingsCheck.error,
    refused.length > 0 ? `Fix the refused setting${refused.length === 1 ? '' : 's'}: ${refused.join(', ')}.` : null,
  ].filter((x): x is string => x !== null);

  const submit = async () => {
    // Once created, the form's crawl exists: a second Create would make a second crawl.
    if (blocking.length > 0 || created !== null || busy) return;
    setBusy(true);
    setHostError(null);
    const follow: Record<string, unknown> = { scope };
    if (depth.value !== undefined) follow.max_depth = depth.value;
    if (pages.value !== undefined) follow.max_pages = pages.value;
    if (includeCheck.list.length > 0) follow.include = includeCheck.list;
    if (excludeCheck.list.length > 0) follow.exclude = excludeCheck.list;
    const config = {
      name: name.trim(),
      // One text, so the host numbers bad lines as the text area does (with seedsFrom, the typed lines add to the copy's).
      ...(seedsFrom === null ? { seeds } : {}),
      follow,
      settings: settingsCheck.value ?? {},
      ...(resolveCheck.value ? { resolve: resolveCheck.value } : {}),
      ...(rules.length > 0 ? { scopes: rulesFromDrafts(rules) } : {}),
    };
    const r = await commands.createCrawl(config, seedsFrom === null ? {} : { seedsFrom: seedsFrom.crawlId, ...(seeds.trim() ? { seedsText: seeds } : {}) });
    setBusy(false);
    if (!r.ok) {
      setHostError(r.error);
      return;
    }
    const c = { id: r.result.crawl.id, name: r.result.crawl.name, seedErrors: r.result.seedErrors };
    if (c.seedErrors.length === 0) onOpen(c.id);
    else setCreated(c);
  };

  return (
    <section className="panel new-crawl" aria-labelledby="new-crawl-title" data-testid="new-crawl-form">
      <div className="panel-head">
        <h2 id="new-crawl-title">{from === undefined ? 'New crawl' : `New crawl from crawl ${from}`}</h2>
        <span className="panel-note">created, not started: start it from its header</span>
      </div>
      <form className="form-grid" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        <div className="form-col">
          <label className="field">
            <span className="field-label">Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} placeholder="Docs refresh" />
          </label>
          {seedsFrom && (
            <div className="field-note seeds-from" data-testid="seeds-from">
              Seeds: the {seedsFrom.count.toLocaleString('en-US')} seeds of “{seedsFrom.name}”, kept as they are
              {' '}<button type="button" className="link" onClick={() => setSeedsFrom(null)}>Replace them with the lines below</button>
            </div>
          )}
          <label className="field">
            <span className="field-label">{seedsFrom ? 'More seeds, one URL a line' : 'Seeds, one URL a line'}</span>
            <textarea className="input mono" rows={7} value={seeds} spellCheck={false} onChange={(e) => setSeeds(e.target.value)}
              placeholder="https://example.org/" aria-invalid={seedCheck.problems.length > 0} />
          </label>
          <div className="seed-file">
            <label className="btn btn-small file-button">
              Load seeds from a file…
              <input type="file" className="visually-hidden" accept=".txt,.csv,.lst,.urls,text/plain" aria-label="Load seeds from a file"
                data-testid="seed-file" onChange={(e) => void loadSeedFile(e.currentTarget)} />
            </label>
            {seedFile && (
              <span className={seedFile.error ? 'field-error' : 'muted'} data-testid="seed-file-note">
                {seedFile.text}
              </span>
            )}
          </div>
          <div className="field-note" data-testid="seed-count">
            {seedCheck.good} valid seed{seedCheck.good === 1 ? '' : 's'}
            {seedCheck.problems.length > 0 && ` · ${seedCheck.problems.length} bad line${seedCheck.problems.length === 1 ? '' : 's'} (skipped)`}
          </div>
          {seedCheck.problems.length > 0 && (
            <ul className="field-error seed-problems" data-testid="seed-problems">
              {seedCheck.problems.slice(0, SHOWN_PROBLEMS).map((p) => (
                <li key={p.line}>
                  line {p.line}: {p.text} ({p.message})
                </li>
              ))}
              {seedCheck.problems.length > SHOWN_PROBLEMS && <li>… and {seedCheck.problems.length - SHOWN_PROBLEMS} more bad lines</li>}
            </ul>
          )}
          <div className="field-row">
            <label className="field">
              <span className="field-label">Follow links</span>
              <select className="input" value={scope} onChange={(e) => setScope(e.target.value as (typeof SCOPES)[number])}>
                {SCOPES.map((s) => (
                  <option key={s} value={s}>
                    {s === 'none' ? 'none (seeds only)' : `same ${s === 'any' ? 'anything' : s}`}
                  </option>
                ))}
              </select>
            </label>
            <label className="field">
              <span className="field-label">Max depth</span>
              <input className="input" inputMode="numeric" value={maxDepth} onChange={(e) => setMaxDepth(e.target.value)} placeholder="no limit" />
            </label>
            <label className="field">
              <span className="field-label">Max pages</span>
              <input className="input" inputMode="numeric" value={maxPages} onChange={(e) => setMaxPages(e.target.value)} placeholder="no limit" />
            </label>
          </div>
          {(depth.error || pages.error) && <div className="field-error">{depth.error ?? pages.error}</div>}
          <div className="field-row">
            <label className="field">
              <span className="field-label">Only URLs matching</span>
              <textarea className="input mono" rows={2} value={include} spellCheck={false} onChange={(e) => setInclude(e.target.value)}
                placeholder="^https://docs\.example\.org/" aria-invalid={includeCheck.error !== null} />
            </label>
            <label className="field">
              <span className="field-label">Never URLs matching</span>
              <textarea className="input mono" rows={2} value={exclude} spellCheck={false} onChange={(e) => setExclude(e.target.value)}
                placeholder="/login|\?sort=" aria-invalid={excludeCheck.error !== null} />
            </label>
          </div>
          <div className="field-note">Regular expressions on the whole URL, one a line: links matching none of the first list, or one of the second, are not followed.</div>
          {(includeCheck.error || excludeCheck.error) && <div className="field-error" data-testid="pattern-error">{includeCheck.error ?? excludeCheck.error}</div>}
          <RulesEditor rules={rules} onChange={setRules} />
        </div>
        <div className="form-col">
          <label className="field">
            <span className="field-label">Preset</span>
            <select className="input" value={presetId} onChange={(e) => choosePreset(e.target.value)} aria-label="Preset">
              <option value="">None (defaults)</option>
              {PRESETS.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.label}
                </option>
              ))}
            </select>
          </label>
          <div className="field-note" data-testid="preset-help">
            {preset ? preset.help : 'Scrapy\'s defaults: no AutoThrottle, 8 requests per host, no delay.'}
          </div>
          {preset && <code className="preset-settings">{JSON.stringify(preset.settings)}</code>}
          <EverySetting base={base} drafts={drafts} errors={draftCheck.errors} onDraft={onDraft} skip={SKIPPED} open={prefill !== null} />
          <label className="field">
            <span className="field-label">Advanced settings as JSON (applied last, over every field above)</span>
            <textarea className="input mono" rows={4} value={advanced} spellCheck={false} onChange={(e) => setAdvanced(e.target.value)}
              placeholder={'{"DOWNLOAD_DELAY": 0.5}'} aria-invalid={settingsCheck.error !== null} />
          </label>
          {settingsCheck.error && (
            <div className="field-error pre" data-testid="advanced-error">
              {settingsCheck.error}
            </div>
          )}
          <label className="field">
            <span className="field-label">Resolve (optional JSON: host → IP address)</span>
            <textarea className="input mono" rows={2} value={resolve} spellCheck={false} onChange={(e) => setResolve(e.target.value)}
              placeholder={'{"example.test": "127.0.0.1"}'} />
          </label>
          {resolveCheck.error && <div className="field-error">{resolveCheck.error}</div>}
        </div>
        <div className="form-wide">
          <ScopesTable rows={scopeRows} onChange={setScopeRows} error={scopesCheck.error} />
        </div>
        <div className="form-actions">
          {hostError && (
            <div className="field-error pre" role="alert" data-testid="create-error">
              Refused: {hostError.message}
              {hostError.field ? ` (field ${hostError.field})` : ''}
            </div>
          )}
          {created && (
            <div className="field-note created-note" data-testid="created-note">
              Created “{created.name}”. The host skipped {created.seedErrors.length} seed line{created.seedErrors.length === 1 ? '' : 's'}:
              <ul className="field-error">
                {created.seedErrors.map((e) => (
                  <li key={`${e.source}-${e.line}`}>
                    line {e.line}: {e.text} ({e.message})
                  </li>
                ))}
              </ul>
              <button type="button" className="btn btn-small" onClick={() => onOpen(created.id)}>
                Show the crawl
              </button>
            </div>
          )}
          <div className="toolbar">
            <button type="submit" className="btn btn-primary" disabled={busy || blocking.length > 0 || created !== null || !online}
              title={!online ? OFFLINE_TITLE : created !== null ? `“${created.name}” is created: show it, or close this form` : blocking.join(' ')}>
              Create
            </button>
            <button type="button" className="btn" onClick={onCancel}>
              Cancel
            </button>
            {blocking.length > 0 && <span className="muted">{blocking[0]}</span>}
          </div>
        </div>
      </form>
    </section>
  );
}
