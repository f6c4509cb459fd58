// The New crawl form's Advanced section: every setting of the schema with its friendly label, Scrapy
// name, help and default, editable over the chosen preset and checked with shared applySettings as typed.

import { memo, useMemo } from 'react';
import type { SettingDescription } from '../../../shared/contract';
import { applySettings, type Settings } from '../../../shared/settings';
import type { SchemaStore } from '../store/app-state';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { isComplex, parseInput, showValue } from './setting-value';

const schemaOf = (s: SchemaStore) => s.current();

/** What the user typed per setting (only the ones touched). */
export type SettingDrafts = Readonly<Record<string, string>>;

export interface DraftCheck {
  /** The typed values that passed, to merge over the preset. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Per setting, why its value is refused. */
  readonly errors: Readonly<Record<string, string>>;
}

/** Checks each typed value alone against `base` (the preset over the defaults). */
export function checkDrafts(schema: readonly SettingDescription[] | null, drafts: SettingDrafts, base: Settings): DraftCheck {
  const values: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const d of schema ?? []) {
    const text = drafts[d.name];
    if (text === undefined || (text.trim() === '' && typeof d.default !== 'string')) continue;
    const parsed = parseInput(d, base[d.name], text);
    if (!parsed.ok) {
      errors[d.name] = parsed.message;
      continue;
    }
    const r = applySettings({ [d.name]: parsed.value }, base);
    if (r.ok) values[d.name] = parsed.value;
    else errors[d.name] = r.errors.map((e) => e.message).join('; ');
  }
  return { values, errors };
}

export function EverySetting({ base, drafts, errors, onDraft, skip, open }: {
  base: Settings;
  drafts: SettingDrafts;
  errors: Readonly<Record<string, string>>;
  onDraft: (name: string, text: string | null) => void;
  /** Settings edited elsewhere in the form (THROTTLING_SCOPES has its table): not listed. */
  skip?: ReadonlySet<string>;
  /** Start unfolded (a form filled from a crawl shows what it copied). */
  open?: boolean;
}) {
  const { stores } = useApp();
  const schema = useStore(stores.schema, schemaOf);
  const groups = useMemo(() => {
    const out = new Map<string, SettingDescription[]>();
    for (const d of schema ?? []) if (!skip?.has(d.name)) out.set(d.group, [...(out.get(d.group) ?? []), d]);
    return [...out];
  }, [schema, skip]);
  const touched = Object.keys(drafts).length;
  const bad = Object.keys(errors).length;
  return (
    <details className="every-setting" data-testid="every-setting" open={open}>
      <summary>
        Advanced: every setting
        <span className="muted">
          {touched > 0 ? ` · ${touched} set here` : ''}
          {bad > 0 ? ` · ${bad} refused` : ''}
        </span>
      </summary>
      {!schema ? (
        <p className="empty">Loading the settings…</p>
      ) : (
        <div className="every-setting-list">
          {groups.map(([group, items]) => (
            <section key={group} aria-label={`${group} settings`}>
              <h3>{group}</h3>
              {items.map((d) => (
                <SettingField key={d.name} d={d} value={base[d.name]} draft={drafts[d.name]} error={errors[d.name]} onDraft={onDraft} />
              ))}
            </section>
          ))}
        </div>
      )}
    </details>
  );
}

const SettingField = memo(function SettingField({ d, value, draft, error, onDraft }: {
  d: SettingDescription; value: unknown; draft: string | undefined; error: string | undefined; onDraft: (name: string, text: string | null) => void;
}) {
  const id = `new-setting-${d.name}`;
  const complex = isComplex(d, value);
  const shown = showValue(value);
  const fromPreset = shown !== showValue(d.default);
  return (
    <div className="new-setting" data-testid={id}>
      <div className="new-setting-what">
        <label htmlFor={id} className="setting-label">{d.label}</label>
        <code className="setting-name">{d.name}</code>
        <div className="setting-help">{d.help}</div>
      </div>
      <div className="new-setting-edit">
        {typeof d.default === 'boolean' ? (
          <Switch id={id} on={draft === undefined ? value === true : draft.trim().toLowerCase() === 'true'}
            onChange={(on) => onDraft(d.name, on === (value === true) ? null : String(on))} />
        ) : complex ? (
          <textarea id={id} className="input mono" rows={2} spellCheck={false} value={draft ?? ''} placeholder={shown} aria-invalid={error !== undefined}
            onChange={(e) => onDraft(d.name, e.target.value === '' ? null : e.target.value)} />
        ) : (
          <input id={id} className="input mono" spellCheck={false} value={draft ?? ''} placeholder={shown} aria-invalid={error !== undefined}
            onChange={(e) => onDraft(d.name, e.target.value === '' ? null : e.target.value)} />
        )}
        <div className="muted new-setting-default">
          default <code>{showValue(d.default)}</code>
          {fromPreset && <> · preset <code>{shown}</code></>}
          <span title={d.allowed}> · {d.allowed}</span>
        </div>
        {error && (
          <div className="field-error" role="alert" data-testid="new-setting-error">
            {error}
          </div>
        )}
      </div>
    </div>
  );
});

/** A boolean setting as a switch: on or off, said in words beside it. */
function Switch({ id, on, onChange }: { id: string; on: boolean; onChange: (on: boolean) => void }) {
  return (
    <span className="switch-row">
      <input id={id} type="checkbox" role="switch" className="switch" checked={on} aria-checked={on} onChange={(e) => onChange(e.target.checked)} />
      <span className="switch-words" aria-hidden="true">{on ? 'on' : 'off'}</span>
    </span>
  );
}
