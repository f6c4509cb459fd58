// How a setting's value is written in the settings panel and read back from what the user typed:
// scalars as plain text, maps and lists (and pairs) as JSON text.

import type { SettingDescription } from '../../../shared/contract';

/** Maps and lists edit as JSON in a text area. */
export function isComplex(d: SettingDescription, current: unknown): boolean {
  return (typeof d.default === 'object' && d.default !== null) || (typeof current === 'object' && current !== null);
}

/** The value as it is shown and first put in the editor. */
export function showValue(v: unknown, pretty = false): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  return pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v);
}

export type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };

/** What the user typed, as the value to validate and send. Text settings keep the text as is. */
export function parseInput(d: SettingDescription, current: unknown, text: string): Parsed {
  if (typeof d.default === 'string') return { ok: true, value: text };
  const t = text.trim();
  if (isComplex(d, current)) {
    try {
      return { ok: true, value: JSON.parse(t) };
    } catch (e) {
      return { ok: false, message: `${d.name}: not valid JSON (${e instanceof Error ? e.message : String(e)}); allowed: ${d.allowed}` };
    }
  }
  if (t === '') return { ok: true, value: t };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: true, value: t };
  }
}
