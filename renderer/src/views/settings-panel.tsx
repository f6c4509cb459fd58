// The selected crawl's settings, grouped as the schema groups them, each editable in place:
// a value is checked with shared applySettings as it is typed, sent with 'settings.update' on Apply.

import { memo, useCallback, useMemo, useState } from 'react';
import type { SettingDescription } from '../../../shared/contract';
import { applySettings, type Settings } from '../../../shared/settings';
import type { ChangeRecord, SlotChange } from '../../../shared/types';
import { isNoop, resetValue } from './journal/journal-words';
import type { SchemaStore } from '../store/app-state';
import type { CrawlLogStore } from '../store/crawl-log-store';
import type { CrawlsStore } from '../store/crawls-store';
import { OFFLINE_TITLE, useHostOnline } from '../components/connection-notice';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { formatWhen } from './format';
import { isComplex, parseInput, showValue } from './setting-value';

const schemaOf = (s: SchemaStore) => s.current();
const settingsOf = (s: CrawlLogStore) => s.settings();
const changesOf = (s: CrawlLogStore) => s.changes();

export function SettingsPanel({ crawlId }: { crawlId: number }) {
  const { stores } = useApp();
  const log = stores.crawlLogs.get(crawlId);
  const schema = useStore(stores.schema, schemaOf);
  const settings = useStore(log, settingsOf);
  // A crawl that has ended keeps the settings it ran with (the host refuses changes after its end).
  const ended = useStore(stores.crawls, useCallback((s: CrawlsStore) => {
    const c = s.crawl(crawlId);
    if (!c) return null;
    if (c.derivedFrom !== undefined) return 'a what-if replay';
    return c.status === 'finished' || c.status === 'failed' ? c.status : null;
  }, [crawlId]));
  const groups = useMemo(() => {
    const out = new Map<string, SettingDescription[]>();
    for (const d of schema ?? []) out.set(d.group, [...(out.get(d.group) ?? []), d]);
    return [...out];
  }, [schema]);

  return (
    <div className="settings-layout" data-testid="settings-panel">
      <div className="settings-scroll">
        {ended && (
          <p className="settings-ended" data-testid="settings-ended">
            This crawl is {ended}: these are the settings it ran with, kept as recorded. Duplicate it to crawl again with other settings.
          </p>
        )}
        {!schema || !settings ? (
          <p className="empty">Loading settings…</p>
        ) : (
          groups.map(([group, items]) => (
            <section key={group} className="settings-group" aria-label={`${group} settings`}>
              <h3>{group}</h3>
              {items.map((d) => (
                <SettingRow key={d.name} crawlId={crawlId} d={d} settings={settings} readOnly={ended !== null} />
              ))}
            </section>
          ))
        )}
      </div>
      <ChangesList log={log} />
    </div>
  );
}

type Status = { readonly kind: 'applied'; readonly at: number } | { readonly kind: 'refused'; readonly message: string } | null;

const SettingRow = memo(function SettingRow({ crawlId, d, settings, readOnly }: { crawlId: number; d: SettingDescription; settings: Settings; readOnly: boolean }) {
  const { commands } = useApp();
  const online = useHostOnline();
  const current = settings[d.name];
  const complex = isComplex(d, current);
  const [draft, setDraft] = useState<string | null>(null);
  const [status, setStatus] = useState<Status>(null);
  const [busy, setBusy] = useState(false);
  const text = draft ?? showValue(current, complex);

  // Inline check against the crawl's current settings, before anything is sent.
  const check = useMemo(() => {
    if (draft === null) return { error: null, value: undefined, changed: false };
    const parsed = parseInput(d, current, draft);
    if (!parsed.ok) return { error: parsed.message, value: undefined, changed: false };
    const r = applySettings({ [d.name]: parsed.value }, settings);
    if (!r.ok) return { error: r.errors.map((e) => e.message).join('; '), value: undefined, changed: false };
    return { error: null, value: parsed.value, changed: r.changed.length > 0 };
  }, [d, current, draft, settings]);

  const apply = async () => {
    if (check.error || !check.changed || readOnly || !online) return;
    setBusy(true);
    const r = await commands.updateSettings(crawlId, { [d.name]: check.value });
    setBusy(false);
    if (r.ok) {
      setStatus({ kind: 'applied', at: r.result.at });
      setDraft(null);
    } else {
      setStatus({ kind: 'refused', message: r.error.message });
    }
  };

  const inputId = `setting-${d.name}`;
  const error = check.error ?? (status?.kind === 'refused' ? status.message : null);
  const onChange = (v: string) => {
    setDraft(v);
    setStatus(null);
  };
  return (
    <div className={`setting-row${error ? ' has-error' : ''}`} data-setting={d.name} data-testid={`setting-${d.name}`}>
      <div className="setting-what">
        <label htmlFor={inputId} className="setting-label">
          {d.label}
        </label>
        <code className="setting-name">{d.name}</code>
        <div className="setting-help">{d.help}</div>
      </div>
      <div className="setting-values">
        <div className="setting-current">
          <span className="muted">now</span> <code data-testid="setting-current">{showValue(current)}</code>
          <span className="muted"> · default</span> <code>{showValue(d.default)}</code>
        </div>
        <div className="setting-edit">
          {complex ? (
            <textarea id={inputId} className="input mono" rows={3} spellCheck={false} value={text} aria-invalid={error !== null} readOnly={readOnly}
              onChange={(e) => onChange(e.target.value)} />
          ) : (
            <input id={inputId} className="input mono" value={text} aria-invalid={error !== null} spellCheck={false} readOnly={readOnly}
              onChange={(e) => onChange(e.target.value)} onKeyDown={(e) => e.key === 'Enter' && void apply()} />
          )}
          {!readOnly && (
            <button type="button" className="btn btn-small" disabled={busy || check.error !== null || !check.changed || !online} onClick={() => void apply()}
              aria-label={`Apply ${d.name}`} title={online ? undefined : OFFLINE_TITLE}>
              Apply
            </button>
          )}
          {draft !== null && (
            <button type="button" className="btn btn-small" onClick={() => { setDraft(null); setStatus(null); }} aria-label={`Reset ${d.name}`}>
              Reset
            </button>
          )}
        </div>
        {error !== null && (
          <div className="field-error" role="alert" data-testid="setting-error">
            {error}
          </div>
        )}
        {status?.kind === 'applied' && (
          <div className="field-ok" data-testid="setting-applied">
            applied at {formatWhen(status.at)}
          </div>
        )}
      </div>
    </div>
  );
});

function ChangesList({ log }: { log: CrawlLogStore }) {
  // A change that changed nothing (a block to the same end, a setting to its own value) is no row.
  const all = useStore(log, changesOf);
  const changes = useMemo(() => all.filter((c) => !isNoop(c)), [all]);
  return (
    <section className="changes" aria-labelledby="changes-title">
      <div className="panel-head">
        <h3 id="changes-title">Changes</h3>
        <span className="panel-note">{changes.length} recorded, newest first</span>
      </div>
      {changes.length === 0 ? (
        <p className="empty">No changes yet.</p>
      ) : (
        <div className="table-scroll changes-scroll">
          <table className="grid" data-testid="changes-list">
            <thead>
              <tr>
                <th className="left">Time</th>
                <th className="left">Setting</th>
                <th className="left">Old → new</th>
                <th className="left">Source</th>
              </tr>
            </thead>
            <tbody>
              {changes.slice(0, 300).map((c, i) => (
                <ChangeRow key={`${c.t}-${i}-${c.setting}`} c={c} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/**
 * A recorded value in words: a Retry-After block's end as a time of day, a backoff reset's level and
 * block, a pause as paused or running, no value (a pin cleared, no Crawl-delay) as none, others as they were set.
 */
function changeValue(c: ChangeRecord, v: unknown): string {
  if (c.slot !== null) {
    switch (c.setting as SlotChange) {
      case 'blocked_until':
        return typeof v === 'number' ? `until ${formatWhen(v)}` : 'none';
      case 'backoff_reset': {
        const r = resetValue(v);
        return `level ${r.level}${r.blockedUntil !== null ? `, blocked until ${formatWhen(r.blockedUntil)}` : ''}`;
      }
      case 'paused':
        return v === true ? 'paused' : 'running';
      default:
    }
  }
  return v === null || v === undefined ? 'none' : showValue(v);
}

function ChangeRow({ c }: { c: ChangeRecord }) {
  return (
    <tr data-setting={c.setting}>
      <td className="left muted">{formatWhen(c.t)}</td>
      <td className="left change-setting">
        {/* Long Scrapy names break after an underscore, not inside a word. */}
        <code>{c.setting.split('_').flatMap((part, i) => (i === 0 ? [part] : [<wbr key={i} />, `_${part}`]))}</code>
        {c.slot !== null && <div className="muted change-slot">{c.slot}</div>}
      </td>
      <td className="left mono" data-col="values">
        {changeValue(c, c.oldValue)} → {changeValue(c, c.newValue)}
      </td>
      <td className="left muted" data-col="source">{c.source}</td>
    </tr>
  );
}
