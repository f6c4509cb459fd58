// The "New crawl" form: name, seeds (typed, or loaded from a file; bad lines named by number before
// and after Create), follow rules, a preset and extra settings checked with shared applySettings as typed.

import { useCallback, useMemo, useState } from 'react';
import type { AppError, SeedLineErrorWire } from '../../../shared/contract';
import { applySettings, DEFAULT_SETTINGS, PRESETS } from '../../../shared/settings';
import type { SchemaStore } from '../store/app-state';
import { useStore } from '../store/use-store';
import { OFFLINE_TITLE, useHostOnline } from '../components/connection-notice';
import { useApp } from './app-context';
import { checkDrafts, EverySetting, type SettingDrafts } from './new-crawl-settings';

const schemaOf = (s: SchemaStore) => s.current();

const SCOPES = ['host', 'domain', 'any', 'none'] as const;
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

export function NewCrawlForm({ onCancel, onOpen }: { onCancel: () => void; onOpen: (crawlId: number) => void }) {
  const { commands, transport, stores } = useApp();
  const [name, setName] = useState('');
  const [seeds, setSeeds] = useState('');
  const [scope, setScope] = useState<(typeof SCOPES)[number]>('host');
  const [maxDepth, setMaxDepth] = useState('');
  const [maxPages, setMaxPages] = useState('');
  const [presetId, setPresetId] = useState('');
  const [advanced, setAdvanced] = useState('');
  const [drafts, setDrafts] = useState<SettingDrafts>({});
  const schema = useStore(stores.schema, schemaOf);
  const [resolve, setResolve] = useState('');
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
  const seedCheck = useMemo(() => checkSeedLines(seeds), [seeds]);
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
    const merged = { ...(preset?.settings ?? {}), ...draftCheck.values, ...(extra.value ?? {}) };
    const r = applySettings(merged);
    if (!r.ok) return { value: undefined, error: r.errors.map((e) => e.message).join('\n') };
    return { value: merged, error: null };
  }, [advanced, preset, draftCheck]);
  const refused = Object.keys(draftCheck.errors);

  const blocking = [
    name.trim() === '' ? 'Give the crawl a name.' : null,
    seedCheck.good === 0 ? 'Give at least one http(s) seed URL.' : null,
    depth.error, pages.error, resolveCheck.error, settingsCheck.error,
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
    const config = {
      name: name.trim(),
      // One text, so the host numbers bad lines as the text area does.
      seeds,
      follow,
      settings: settingsCheck.value ?? {},
      ...(resolveCheck.value ? { resolve: resolveCheck.value } : {}),
    };
    const r = await commands.createCrawl(config);
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
        <h2 id="new-crawl-title">New crawl</h2>
        <span className="panel-note">created, not started: start it from its header</span>
      </div>
      <form className="form-grid" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        <div className="form-col">
          <label className="field">
            <span className="field-label">Name</span>
            <input className="input" value={name} onChange={(e) => setName(e.target.value)} placeholder="Docs refresh" />
          </label>
          <label className="field">
            <span className="field-label">Seeds, one URL a line</span>
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
        </div>
        <div className="form-col">
          <label className="field">
            <span className="field-label">Preset</span>
            <select className="input" value={presetId} onChange={(e) => setPresetId(e.target.value)} aria-label="Preset">
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
          <EverySetting base={base} drafts={drafts} errors={draftCheck.errors} onDraft={onDraft} />
          <label className="field">
            <span className="field-label">Settings as JSON (over the preset and the list above)</span>
            <textarea className="input mono" rows={4} value={advanced} spellCheck={false} onChange={(e) => setAdvanced(e.target.value)}
              placeholder={'{"DOWNLOAD_DELAY": 0.5}'} aria-invalid={settingsCheck.error !== null} aria-label="Advanced settings" />
          </label>
          {settingsCheck.error && (
            <div className="field-error pre" data-testid="advanced-error">
              {settingsCheck.error}
            </div>
          )}
          <label className="field">
            <span className="field-label">Resolve (optional JSON: host → IP address)</span>
            <textarea className="input mono" rows={2} value={resolve} spellCheck={false} onChange={(e) => setResolve(e.target.value)}
              placeholder={'{"example.test": "127.0.0.1"}'} aria-label="Resolve" />
          </label>
          {resolveCheck.error && <div className="field-error">{resolveCheck.error}</div>}
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
